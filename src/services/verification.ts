import {
  attestationKeyIdsOf,
  keyCoverageProblem,
  type NoteKey,
  parseCheckpointText,
  parseNote,
  toBase64,
  verifyNote,
  type CheckpointKey,
  type HashBytes,
  type InclusionEvidence,
  isObject,
  keyForReceipt,
  parentLinkOf,
  type ParentEvidence,
  type Sha256Hex,
  type VerifyExpectations,
  verifyReceipt,
  type VerifyResult,
} from '@svc/verify';
import { SvcError } from '../core/errors.js';
import type { LedgerStore } from '../ports/ledger-store.js';
import type { ServerKey } from '../ports/signer.js';
import { rememberingVerify } from './remembering-verify.js';
import type { HistoryKey } from './signing-keys.js';

/**
 * The key a receipt is checked against: the history key its attestation names, with a refusal
 * when that key did not sign the receipt's sequence or was revoked at or before it. Without a
 * history (a ledger the server has not registered its key in) the server's own key.
 */
function issuerKey(
  receipt: unknown,
  serverKey: ServerKey,
  history: HistoryKey[] | undefined,
  allKeyIds: string[],
): { publicKey: Uint8Array; keyId: string; keyRefusal?: string } {
  const own = { publicKey: serverKey.publicKeyRaw, keyId: serverKey.keyId };
  if (!history || allKeyIds.length === 0) return own;
  const { key, refusal } = keyForReceipt(receipt, history);
  if (key) return { publicKey: key.raw, keyId: key.keyId, keyRefusal: refusal };
  const named = attestationKeyIdsOf(receipt);
  if (named.length === 0) return own;
  const known = named.find((id) => allKeyIds.includes(id));
  return {
    ...own,
    keyRefusal: known
      ? `key ${known} is in this ledger's key history, but its public key was never recorded (adopted from receipts signed before the history existed)`
      : `signed by ${named.join(', ')}, which is not a key of this ledger's key history (GET /v1/keys)`,
  };
}

type Verify = (signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array) => boolean;

// One memo per verifier (the server key's), kept across requests (remembering-verify.ts).
const remembered = new WeakMap<Verify, Verify>();
function rememberedFor(verify: Verify): Verify {
  let memo = remembered.get(verify);
  if (!memo) remembered.set(verify, (memo = rememberingVerify(verify)));
  return memo;
}

/** The ledger's own inclusion proofs, as `GET /v1/receipts/:id/proof` answers them. */
export interface InclusionSource {
  /** `leafIndex`: the receipt's leaf, when the caller has read it already. */
  inclusion(receiptId: string, size?: number, leafIndex?: number): Promise<unknown>;
  /** The root of the ledger's own tree of `size` leaves; null beyond its size. */
  rootAt?(size: number): Promise<Uint8Array | null>;
}

/**
 * A checkpoint signed by a key of the ledger's history for a tree size the ledger holds, whose
 * root is not the ledger's root of that size: the log signed two different trees of one size
 * (a split view, or a key used outside this service). Signed evidence a relying party keeps.
 */
export interface ForkEvidence {
  size: number;
  /** The root the presented checkpoint signs (base64). */
  checkpoint_root: string;
  /** The root of the ledger's own tree of that size (base64). */
  ledger_root: string;
  /** The key ids of the history whose signatures on the checkpoint verify. */
  signed_by: string[];
  /** The presented checkpoint, as given. */
  checkpoint: string;
}

/**
 * Fork evidence in a presented proof's checkpoint (attacker-controlled; any failure to parse
 * or verify is simply no evidence: the inclusion check reports it).
 */
async function forkEvidenceOf(
  given: unknown,
  evidence: InclusionEvidence,
  log: InclusionSource,
): Promise<ForkEvidence | null> {
  if (!log.rootAt || !isObject(given) || typeof given.checkpoint !== 'string') return null;
  const note = given.checkpoint;
  const parsed = parseNote(note);
  const body = parsed ? parseCheckpointText(parsed.text) : null;
  if (!body || body.origin !== evidence.origin || body.size < 1) return null;
  const noteKeys: NoteKey[] = evidence.keys.map((k) => ({
    name: evidence.origin,
    publicKey: k.publicKey,
  }));
  const verified = verifyNote(note, noteKeys, evidence.verify);
  if (!verified.ok) return null;
  // Only a key that was current at that size could have signed it in this service.
  const signers = verified.verifiedBy
    .map((k) => evidence.keys[noteKeys.indexOf(k)]!)
    .filter((k) => keyCoverageProblem(k, body.size) === null);
  if (signers.length === 0) return null;
  const own = await log.rootAt(body.size);
  if (!own || toBase64(own) === toBase64(body.root)) return null;
  return {
    size: body.size,
    checkpoint_root: toBase64(body.root),
    ledger_root: toBase64(own),
    signed_by: signers.map((k, i) => k.keyId ?? `key ${i + 1}`),
    checkpoint: note,
  };
}

/**
 * The `inclusion` check's evidence: the proof given, else the ledger's own (in the tree of its
 * newest checkpoint); checkpoints may be signed by any key of the history with a public key
 * (each within the sizes it was current for), or the server's key when there is no history.
 */
async function inclusionEvidence(
  receiptId: string | null,
  leafIndex: number | null,
  given: unknown,
  deps: { log: InclusionSource; serverKey: ServerKey; logOrigin: string; hashBytes?: HashBytes },
  history: HistoryKey[] | undefined,
): Promise<InclusionEvidence> {
  const keys: CheckpointKey[] =
    history && history.length > 0
      ? history.map((k) => ({ publicKey: k.raw, keyId: k.keyId, record: k.record }))
      : [{ publicKey: deps.serverKey.publicKeyRaw, keyId: deps.serverKey.keyId }];
  const evidence = {
    origin: deps.logOrigin,
    keys,
    verify: rememberedFor(deps.serverKey.verify),
    hash: deps.hashBytes,
  };
  if (given !== undefined) return { ...evidence, proof: given };
  const unavailable = {
    ...evidence,
    proof: null,
    unavailable: 'receipt_id is unknown to this ledger, so the ledger has no inclusion proof of it',
  };
  if (receiptId === null || leafIndex === null) return unavailable;
  try {
    return { ...evidence, proof: await deps.log.inclusion(receiptId, undefined, leafIndex) };
  } catch (error) {
    if (error instanceof SvcError && error.code === 'not_found') return unavailable;
    throw error;
  }
}

/**
 * The issuer-operated verify of the spec: all three layers, the ledger consulted. With `log`,
 * the ledger layer also checks the receipt's inclusion in the transparency log: with
 * `proof` when one is given, else with a proof the ledger makes.
 */
export async function verifyAgainstLedger(
  receipt: unknown,
  deps: {
    ledger: LedgerStore;
    serverKey: ServerKey;
    logOrigin: string;
    sha256Hex?: Sha256Hex;
    /** SHA-256 of bytes for the inclusion check's Merkle hashes (default: the portable one). */
    hashBytes?: HashBytes;
    /** The signing-key history; absent, only the server's key verifies. */
    keys?: { verificationKeys(): Promise<HistoryKey[]>; keyIds(): Promise<string[]> };
    /** The transparency log; absent, there is no inclusion check. */
    log?: InclusionSource;
  },
  expect: VerifyExpectations = {},
  proof?: unknown,
): Promise<VerifyResult & { fork_evidence?: ForkEvidence }> {
  const record = isObject(receipt) ? receipt : {};
  const receiptId = typeof record.receipt_id === 'string' ? record.receipt_id : null;
  // The signed position names the previous receipt; the ledger's copy of it is what
  // chain_linkage compares with. Read with the receipt's own hash and sequence, in one read.
  const sequence = isObject(record.position) ? record.position.sequence : undefined;
  const previousSequence =
    Number.isSafeInteger(sequence) && (sequence as number) > 1 ? (sequence as number) - 1 : null;
  const stored = await deps.ledger.verificationHashes(receiptId, previousSequence);
  const previous = previousSequence === null ? undefined : stored.previousHash;
  const ledgerHash = stored.receiptHash;
  const parent = await parentInLedger(record, deps.ledger);
  const all = deps.keys ? await deps.keys.keyIds() : [];
  const history = deps.keys ? await deps.keys.verificationKeys() : undefined;
  const inclusion = deps.log
    ? await inclusionEvidence(
        receiptId,
        // A receipt's leaf is its sequence - 1 (contract §9).
        stored.sequence === null ? null : stored.sequence - 1,
        proof,
        { ...deps, log: deps.log },
        history,
      )
    : undefined;
  const result = verifyReceipt(receipt, {
    ...issuerKey(receipt, deps.serverKey, history, all),
    verifySignature: deps.serverKey.verify,
    ledgerHash,
    inclusion,
    previousLedgerHash: previous,
    logOrigin: deps.logOrigin,
    sha256Hex: deps.sha256Hex,
    expect,
    parent,
  });
  const fork =
    deps.log && inclusion && proof !== undefined
      ? await forkEvidenceOf(proof, inclusion, deps.log)
      : null;
  if (!fork) return result;
  // A proof against a tree the ledger contradicts proves nothing about the ledger, even when
  // it leads to that tree's root: inclusion fails, and the evidence is reported beside it.
  const checks = result.checks.map((c) =>
    c.name === 'inclusion'
      ? {
          ...c,
          status: 'FAIL' as const,
          detail: `fork evidence: the checkpoint of size ${fork.size} is signed by ${fork.signed_by.join(', ')} of this ledger's key history, but its root ${fork.checkpoint_root} is not the ledger's root of that size, ${fork.ledger_root}`,
        }
      : c,
  );
  return { ...result, valid: false, checks, fork_evidence: fork };
}

/**
 * A disposition's or an outcome's parent as the ledger holds it (contract §11, §12); undefined
 * for other receipts.
 */
async function parentInLedger(
  receipt: Record<string, unknown>,
  ledger: LedgerStore,
): Promise<ParentEvidence | undefined> {
  const found = parentLinkOf(receipt);
  const link = isObject(found) ? found : null;
  const id = link?.parent_receipt_id;
  if (typeof id !== 'string' || id.length > 256) return undefined;
  const hash = await ledger.receiptHashOf(id);
  return hash === null
    ? { missing: `the ledger holds no receipt ${JSON.stringify(id)}, the linked parent` }
    : { receiptId: id, receiptHash: hash };
}

import { ApiError, getJson, getOptional, getText } from './api.js';
// The verifier the server, svc-verify and the GitHub Action run: this is the one module of the
// browser bundle that imports it.
import {
  decisionOf,
  followServedHistory,
  isObject,
  judgeWitnesses,
  keyFromHistory,
  offlineInclusionEvidence,
  parseFingerprint,
  parseInclusionProof,
  parseKeyHistory,
  parsePublicKeyPem,
  parseReceiptInput,
  parseTlogPolicy,
  parseTrustedCheckpoint,
  publishedChainStart,
  verifyReceipt,
  parentLinkOf,
  type ParentEvidence,
  type PublicKey,
  type TrustedKey,
  type VerifyResult,
  type WitnessVerdict,
} from '@svc/verify';

export interface BrowserVerification {
  result: VerifyResult;
  decision: ReturnType<typeof decisionOf>;
  /** The key the receipt was checked against, and how it came to be trusted. */
  key: PublicKey;
  trust: string;
  /** With a tlog-policy: which of its witnesses cosigned the proof's checkpoint, and the quorum. */
  witnesses?: WitnessVerdict;
}

type Json = Record<string, unknown>;
const path = (id: string) => `/v1/receipts/${encodeURIComponent(id)}`;

/** The keys to trust: those a pinned fingerprint reaches in the served history, or all of it. */
async function trustedKeys(
  mode: 'pin' | 'history',
  fingerprint: string,
): Promise<{ keys: (PublicKey | TrustedKey)[]; origin: string | null; trust: string }> {
  const pin = mode === 'pin' ? parseFingerprint(fingerprint) : null;
  const served = await getJson<unknown>('/v1/keys');
  const origin = isObject(served) && typeof served.origin === 'string' ? served.origin : null;
  const listed = isObject(served) && Array.isArray(served.keys) ? (served.keys as Json[]) : [];
  // Pin mode trusts the pinned key and the keys its signed transitions introduce after it,
  // never one before it. Published-history mode takes the service's word: it starts where
  // the history's own transitions, unbroken, lead to its newest key.
  const start = pin ?? (listed.length > 0 ? publishedChainStart(parseKeyHistory(served)) : '');
  const history = listed.length > 0 ? followServedHistory(served, start) : null;
  if (history)
    return {
      keys: history,
      origin,
      trust: pin
        ? `the pinned key ${pin} and the ${history.length - 1} later key(s) its signed transitions introduce`
        : `the key history this service publishes (${history.length} key(s)), as served: pin a fingerprint obtained elsewhere for an independent check`,
    };
  // A service without a key history yet: its single server key.
  const key = parsePublicKeyPem(await getText('/v1/keys/server'));
  if (pin && key.keyId !== pin)
    throw new Error(`the service's key is ${key.keyId}, not the pinned ${pin}: refusing it`);
  return {
    keys: [key],
    origin,
    trust: pin
      ? `the pinned key ${pin} (the service publishes no key history)`
      : `the server key as this service serves it (${key.keyId}): pin a fingerprint obtained elsewhere for an independent check`,
  };
}

/**
 * Checks a receipt as svc-verify does with the ledger at hand: signature under a trusted key,
 * structure, its hash against the ledger's, its linkage to the ledger's previous receipt and
 * its inclusion proof against a checkpoint signed by a trusted key (and, when given, equal to
 * the checkpoint the reader trusts). Every judgement is the core verifier's.
 */
export async function verifyInBrowser(input: {
  receiptText: string;
  mode: 'pin' | 'history';
  fingerprint: string;
  checkpointText: string;
  /** A C2SP tlog-policy the proof's checkpoint must satisfy; empty for none. */
  policyText?: string;
}): Promise<BrowserVerification> {
  const { receipt } = parseReceiptInput(input.receiptText);
  const policy = input.policyText?.trim() ? parseTlogPolicy(input.policyText) : undefined;
  const trustedCheckpoint = input.checkpointText.trim()
    ? parseTrustedCheckpoint(input.checkpointText.trim())
    : undefined;
  const { keys, origin, trust } = await trustedKeys(input.mode, input.fingerprint);
  const history = keys.filter((k): k is TrustedKey => 'record' in k);
  // With a history, the key the receipt names among the trusted ones (svc-verify's choice).
  const { key, keyRefusal } =
    history.length > 0
      ? keyFromHistory(receipt, history)
      : { key: keys[0] as PublicKey, keyRefusal: undefined };
  const receiptId = typeof receipt.receipt_id === 'string' ? receipt.receipt_id : null;
  // The ledger's own copy of the receipt: its stored hash is what hash_integrity compares.
  let ledgerHash: string | null = null;
  let proof: unknown = null;
  if (receiptId) {
    const stored = await getOptional(path(receiptId));
    const chain = stored
      ? (JSON.parse(stored) as { receipt?: { chain?: { receipt_hash?: string } } }).receipt?.chain
      : undefined;
    ledgerHash = chain?.receipt_hash ?? null;
    const proofText = ledgerHash ? await getOptional(`${path(receiptId)}/proof`) : null;
    proof = proofText === null ? null : JSON.parse(proofText);
  }
  const position = isObject(receipt.position) ? receipt.position : {};
  const sequence = typeof position.sequence === 'number' ? position.sequence : null;
  let previousLedgerHash: string | undefined;
  if (sequence !== null && Number.isSafeInteger(sequence) && sequence > 1) {
    try {
      const page = await getJson<{
        receipts: { chain: { sequence: number; receipt_hash: string } }[];
      }>(`/v1/ledger?after=${sequence - 2}&limit=1`);
      const previous = page.receipts[0];
      if (previous?.chain.sequence === sequence - 1)
        previousLedgerHash = previous.chain.receipt_hash;
    } catch (error) {
      // Another account's receipt (private reads): the linkage is checked against the chain only.
      if (!(error instanceof ApiError)) throw error;
    }
  }
  if (proof !== null && 'problem' in parseInclusionProof(proof))
    throw new Error(
      `the service answered a malformed proof: ${(parseInclusionProof(proof) as { problem: string }).problem}`,
    );
  const evidence = offlineInclusionEvidence(receipt, proof, keys, trustedCheckpoint);
  const inclusion =
    proof === null
      ? { ...evidence, unavailable: 'the ledger has no inclusion proof of this receipt_id' }
      : evidence;
  const result = verifyReceipt(receipt, {
    publicKey: key.raw,
    keyId: key.keyId,
    keyRefusal,
    ledgerHash: receiptId ? ledgerHash : null,
    previousLedgerHash,
    logOrigin: origin ?? undefined,
    inclusion,
    parent: await parentOf(receipt),
  });
  // The witnesses of the proof's checkpoint under the policy: part of validity when asked for.
  const checkpoint =
    isObject(proof) && typeof proof.checkpoint === 'string' ? proof.checkpoint : null;
  const witnesses = !policy
    ? undefined
    : checkpoint === null
      ? { ok: false, reason: 'the ledger has no checkpoint of this receipt to judge', report: null }
      : // No bound on cosignature times here: tlog-cosignature lets verifiers refuse future
        // ones but does not require it, and the explorer takes no clock of its own.
        judgeWitnesses(checkpoint, policy);
  const judged = witnesses ? { ...result, valid: result.valid && witnesses.ok } : result;
  return { result: judged, decision: decisionOf(receipt, judged), key, trust, witnesses };
}

/**
 * A disposition's parent as the ledger holds it, for `parent_link` (contract §11): its stored
 * receipt hash, or why there is none; undefined for any other receipt.
 */
async function parentOf(receipt: Record<string, unknown>): Promise<ParentEvidence | undefined> {
  const found = parentLinkOf(receipt);
  const link = isObject(found) ? found : null;
  if (!link || typeof link.parent_receipt_id !== 'string') return undefined;
  const parentId = link.parent_receipt_id;
  const stored = await getOptional(path(parentId));
  if (stored === null)
    return { missing: `the ledger has no receipt ${parentId} (or not for this key)` };
  const hash = (JSON.parse(stored) as { receipt?: { chain?: { receipt_hash?: unknown } } }).receipt
    ?.chain?.receipt_hash;
  return typeof hash === 'string'
    ? { receiptId: parentId, receiptHash: hash }
    : { missing: `the ledger's copy of ${parentId} has no receipt hash` };
}

import { fromBase64, toBase64, utf8Bytes } from '../encoding.js';
import { receiptHashText } from '../receipt-contract.js';
import type { VerifyCheck } from '../verify-check.js';
import {
  HASH_SIZE,
  leafHash,
  portableHashBytes,
  verifyInclusion,
  type HashBytes,
} from './merkle.js';
import {
  parseCheckpointText,
  parseNote,
  verifyNote,
  type Checkpoint,
  type NoteKey,
} from './note.js';
import { isObject } from '../json.js';

// The `inclusion` check of the ledger layer: a receipt is leaf `chain.sequence - 1` of the
// tree a checkpoint signed by one of the ledger's keys commits to (contract §9). Pure, so the
// server and the offline verifiers run the same code. The proof is attacker-controlled: every
// problem is a FAIL with a detail, never an exception.

/** Proofs are O(log n) hashes: 64 covers any tree of up to 2^64 leaves. */
export const MAX_INCLUSION_HASHES = 64;
/** A checkpoint is a few lines; with cosignatures a few KiB at most. */
export const MAX_CHECKPOINT_CHARS = 16 * 1024;

/**
 * An inclusion proof as `GET /v1/receipts/:id/proof` answers it: `leaf_hash` may be given (it
 * must then be the receipt's), `checkpoint` is the signed note of `tree_size`.
 */
export interface ReceiptInclusionProof {
  leaf_index: number;
  tree_size: number;
  inclusion: string[];
  checkpoint: string | null;
  leaf_hash?: string;
}

/**
 * A key that may have signed checkpoints: its raw Ed25519 key (the note key name is the
 * ledger's origin) and, from a key history, the sequences it covered. Without them (a pinned
 * key offline) it vouches for a checkpoint of any size.
 */
export interface CheckpointKey {
  publicKey: Uint8Array;
  keyId?: string;
  record?: {
    first_sequence: number;
    last_sequence: number | null;
    revoked_from_sequence: number | null;
  };
}

export interface InclusionEvidence {
  /** The proof to check, attacker-controlled; null when none could be had (`unavailable`). */
  proof: unknown;
  /** Why there is no proof (the ledger does not hold the receipt, say); a FAIL detail. */
  unavailable?: string;
  /** The ledger's origin: the checkpoint's first line and its signature's key name. */
  origin: string;
  keys: readonly CheckpointKey[];
  hash?: HashBytes;
  /**
   * A checkpoint the caller already trusts (a witness's kept state, say): the proof's
   * checkpoint must then be that one (same origin, size and root).
   */
  trustedCheckpoint?: Checkpoint;
  /** Verifies an Ed25519 signature; the portable strict verifier by default. */
  verify?: (signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array) => boolean;
}

const isCount = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;
const PROOF_MEMBERS: readonly string[] = [
  'leaf_index',
  'tree_size',
  'inclusion',
  'checkpoint',
  'leaf_hash',
];

/** The proof's shape, or why it is malformed. */
export function parseInclusionProof(
  value: unknown,
): { proof: ReceiptInclusionProof; hashes: Uint8Array[] } | { problem: string } {
  if (!isObject(value)) return { problem: 'the proof must be an object' };
  const unknown = Object.keys(value).filter((k) => !PROOF_MEMBERS.includes(k));
  if (unknown.length > 0)
    return {
      problem: `unknown member ${JSON.stringify(unknown[0]!.slice(0, 64))}: a proof has leaf_index, tree_size, inclusion, checkpoint and leaf_hash`,
    };
  const { leaf_index, tree_size, inclusion, checkpoint, leaf_hash } = value;
  if (!isCount(leaf_index)) return { problem: 'leaf_index must be a non-negative integer' };
  if (!isCount(tree_size) || tree_size < 1)
    return { problem: 'tree_size must be a positive integer' };
  if (!Array.isArray(inclusion) || inclusion.length > MAX_INCLUSION_HASHES)
    return { problem: `inclusion must be an array of at most ${MAX_INCLUSION_HASHES} hashes` };
  const hashes: Uint8Array[] = [];
  for (const [i, text] of inclusion.entries()) {
    const bytes = typeof text === 'string' && text.length <= 64 ? fromBase64(text) : null;
    if (!bytes || bytes.length !== HASH_SIZE)
      return { problem: `inclusion[${i}] is not the base64 of a 32-byte hash` };
    hashes.push(bytes);
  }
  if (checkpoint !== null && (typeof checkpoint !== 'string' || checkpoint.length === 0))
    return { problem: 'checkpoint must be the signed checkpoint text' };
  if (typeof checkpoint === 'string' && checkpoint.length > MAX_CHECKPOINT_CHARS)
    return { problem: `checkpoint is longer than ${MAX_CHECKPOINT_CHARS} characters` };
  if (leaf_hash !== undefined) {
    const bytes =
      typeof leaf_hash === 'string' && leaf_hash.length <= 64 ? fromBase64(leaf_hash) : null;
    if (!bytes || bytes.length !== HASH_SIZE)
      return { problem: 'leaf_hash is not the base64 of a 32-byte hash' };
  }
  return {
    proof: {
      leaf_index,
      tree_size,
      inclusion: inclusion as string[],
      checkpoint: checkpoint as string | null,
      ...(leaf_hash === undefined ? {} : { leaf_hash: leaf_hash as string }),
    },
    hashes,
  };
}

/**
 * Whether `key` may have signed a checkpoint of `size`: checkpoints are signed by the key
 * current when they are made, so the size lies from the head when the key took over
 * (first_sequence - 1) to its last sequence, and below the sequence it is revoked from.
 */
export function keyCoverageProblem(key: CheckpointKey, size: number): string | null {
  const record = key.record;
  if (!record) return null;
  const name = key.keyId ?? 'the signing key';
  if (size < record.first_sequence - 1)
    return `${name} took over at size ${record.first_sequence - 1}, after this checkpoint of size ${size}`;
  if (record.last_sequence !== null && size > record.last_sequence)
    return `${name} was retired at size ${record.last_sequence}, before this checkpoint of size ${size}`;
  if (record.revoked_from_sequence !== null && size >= record.revoked_from_sequence)
    return `${name} is revoked from sequence ${record.revoked_from_sequence}: its checkpoint of size ${size} is not trusted`;
  return null;
}

/**
 * The `inclusion` check (ledger layer): the receipt's leaf hash, recomputed from the receipt
 * (SHA-256(0x00 ‖ the JCS preimage of chain.receipt_hash)), is proved by `inclusion` to be
 * leaf `chain.sequence - 1` of the tree whose root the checkpoint signs; the checkpoint is of
 * the ledger's origin and signed by one of `keys` that was current at its size.
 */
export function checkInclusion(
  receipt: unknown,
  evidence: InclusionEvidence,
  /**
   * The preimage of chain.receipt_hash (`receiptHashText`) when the caller has made it already
   * (verifyReceipt, from the core it canonicalized for the signature).
   */
  hashText?: string,
): VerifyCheck {
  const name = 'inclusion';
  const fail = (detail: string): VerifyCheck => ({ name, layer: 'ledger', status: 'FAIL', detail });
  if (evidence.proof === null || evidence.proof === undefined)
    return fail(evidence.unavailable ?? 'no inclusion proof');
  const parsed = parseInclusionProof(evidence.proof);
  if ('problem' in parsed) return fail(`malformed proof: ${parsed.problem}`);
  const { proof, hashes } = parsed;
  const record = isObject(receipt) ? receipt : {};
  const chain = isObject(record.chain) ? record.chain : {};
  if (!Number.isSafeInteger(chain.sequence) || (chain.sequence as number) < 1)
    return fail('the receipt has no chain.sequence, so its leaf index is unknown');
  const index = (chain.sequence as number) - 1;
  if (proof.leaf_index !== index)
    return fail(
      `leaf_index ${proof.leaf_index} is not this receipt's leaf: chain.sequence ${index + 1} is leaf ${index}`,
    );
  const hash = evidence.hash ?? portableHashBytes;
  let leaf: Uint8Array;
  try {
    leaf = leafHash(utf8Bytes(hashText ?? receiptHashText(record)), hash);
  } catch (error) {
    return fail(`the receipt has no leaf data: ${(error as Error).message}`);
  }
  if (proof.leaf_hash !== undefined && proof.leaf_hash !== toBase64(leaf))
    return fail(
      `the proof is for leaf hash ${proof.leaf_hash}, not this receipt's ${toBase64(leaf)}`,
    );
  if (proof.checkpoint === null)
    return fail('the proof has no checkpoint: it proves nothing without a signed tree head');
  const note = parseNote(proof.checkpoint);
  const body = note ? parseCheckpointText(note.text) : null;
  if (!note || !body) return fail('the checkpoint is not a well-formed signed checkpoint');
  if (body.origin !== evidence.origin)
    return fail(
      `the checkpoint is of log ${JSON.stringify(body.origin.slice(0, 256))}, not this ledger's ${JSON.stringify(evidence.origin)}`,
    );
  const noteKeys: NoteKey[] = evidence.keys.map((k) => ({
    name: evidence.origin,
    publicKey: k.publicKey,
  }));
  const verified = verifyNote(proof.checkpoint, noteKeys, evidence.verify);
  if (!verified.ok)
    return fail(
      `bad checkpoint signature: ${
        verified.reason === 'no signature by a trusted key'
          ? "no signature by a key of this ledger's key history"
          : verified.reason
      }`,
    );
  const problems = verified.verifiedBy.map((noteKey) =>
    keyCoverageProblem(evidence.keys[noteKeys.indexOf(noteKey)]!, body.size),
  );
  if (!problems.includes(null))
    return fail(`bad checkpoint signature: ${problems.filter((p) => p !== null).join('; ')}`);
  const trusted = evidence.trustedCheckpoint;
  if (
    trusted &&
    (trusted.origin !== body.origin ||
      trusted.size !== body.size ||
      toBase64(trusted.root) !== toBase64(body.root))
  )
    return fail(
      `the proof's checkpoint (size ${body.size}, root ${toBase64(body.root)}) is not the trusted checkpoint (${trusted.origin === body.origin ? '' : `log ${JSON.stringify(trusted.origin.slice(0, 256))}, `}size ${trusted.size}, root ${toBase64(trusted.root)})`,
    );
  if (proof.tree_size !== body.size)
    return fail(`tree_size ${proof.tree_size} is not the checkpoint's size ${body.size}`);
  if (index >= body.size)
    return fail(`leaf ${index} is not in the checkpoint's tree of size ${body.size}`);
  return verifyInclusion(index, body.size, leaf, hashes, body.root, hash)
    ? { name, layer: 'ledger', status: 'PASS' }
    : fail(
        `the inclusion proof does not lead from this receipt's leaf ${index} to the root of the checkpoint of size ${body.size}`,
      );
}

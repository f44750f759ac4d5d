import { fromBase64 } from '../encoding.js';
import type { TrustedKey } from '../key-history.js';
import { verifyConsistency, type HashBytes } from './merkle.js';
import {
  parseCheckpointText,
  parseNote,
  rootHex,
  verifyNote,
  type Checkpoint,
  type NoteKey,
} from './note.js';
import { keyCoverageProblem, type CheckpointKey } from './receipt-inclusion.js';

// A witness of the log (C2SP tlog-witness, without the cosigning): it keeps the last
// checkpoint it accepted and accepts a new one only when it is signed by a trusted key, of the
// same origin, no smaller, and proved consistent with the kept one. Pure: the caller fetches
// the checkpoint and the proof and keeps the state. Everything fetched is attacker-controlled.

/** Why a checkpoint is refused. Each is a reason to shout, not to retry. */
export type WitnessFailure =
  'malformed' | 'bad_signature' | 'other_origin' | 'rollback' | 'fork' | 'inconsistent';

export type WitnessOutcome =
  /** No kept checkpoint: this one is trusted on first use. */
  | 'first'
  /** The same checkpoint as the kept one. */
  | 'unchanged'
  /** A larger tree, proved consistent with the kept one. */
  | 'consistent';

export type WitnessStep =
  | { ok: false; failure: WitnessFailure; reason: string }
  | {
      ok: true;
      checkpoint: Checkpoint;
      previous: Checkpoint | null;
      /** Set when the outcome needs a consistency proof from `from` to `to` first. */
      prove: { from: number; to: number } | null;
      outcome: WitnessOutcome;
    };

const refuse = (failure: WitnessFailure, reason: string) =>
  ({ ok: false, failure, reason }) as const;

/**
 * A key trusted for a log's checkpoints: a raw Ed25519 key (a single pinned key, which vouches
 * for a checkpoint of any size), or a key of a followed history, which vouches only for the
 * checkpoints made while it was current and not revoked.
 */
export type LogKey = Uint8Array | TrustedKey;

/** The checkpoint-signing form of a trusted key: with its history record when it has one. */
export const checkpointKeyOf = (key: LogKey): CheckpointKey =>
  // isView, not instanceof: a Buffer from another realm is still a raw key.
  ArrayBuffer.isView(key)
    ? { publicKey: key }
    : { publicKey: key.raw, keyId: key.keyId, record: key.record };

/**
 * The trusted keys of a log's checkpoints: signed-note keys are named by the origin, so a raw
 * Ed25519 key trusted for the log becomes the note key `{name: origin, publicKey}`. A list,
 * so that a key history can name every key the log has signed with.
 */
export const checkpointKeys = (origin: string, keys: readonly LogKey[]): NoteKey[] =>
  keys.map((key) => ({ name: origin, publicKey: checkpointKeyOf(key).publicKey }));

/** The checkpoint of a signed note, without checking its signatures (a kept state's). */
export function readCheckpointNote(note: string): Checkpoint | null {
  const parsed = parseNote(note);
  return parsed ? parseCheckpointText(parsed.text) : null;
}

/**
 * Verifies a fetched signed checkpoint under trusted keys, the key name being the checkpoint's
 * own origin. A key of a history counts only when it was current at the checkpoint's size and
 * not revoked by then (as the server's inclusion check decides it, `keyCoverageProblem`).
 */
export function verifySignedCheckpoint(
  note: string,
  keys: readonly LogKey[],
  verify?: (signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array) => boolean,
): { ok: true; checkpoint: Checkpoint } | { ok: false; failure: WitnessFailure; reason: string } {
  const unverified = readCheckpointNote(note);
  if (!unverified) return refuse('malformed', 'the answer is not a signed checkpoint');
  const noteKeys = checkpointKeys(unverified.origin, keys);
  const verified = verifyNote(note, noteKeys, verify);
  if (!verified.ok) {
    return refuse('bad_signature', `checkpoint of ${unverified.origin}: ${verified.reason}`);
  }
  const checkpoint = parseCheckpointText(verified.text)!;
  const problems = verified.verifiedBy.map((noteKey) =>
    keyCoverageProblem(checkpointKeyOf(keys[noteKeys.indexOf(noteKey)]!), checkpoint.size),
  );
  if (!problems.includes(null)) {
    return refuse(
      'bad_signature',
      `checkpoint of ${checkpoint.origin}: ${problems.filter((p) => p !== null).join('; ')}`,
    );
  }
  return { ok: true, checkpoint };
}

const sameRoot = (a: Uint8Array, b: Uint8Array) =>
  a.length === b.length && a.every((byte, i) => byte === b[i]);

const describe = (c: Checkpoint) => `size ${c.size} (root ${rootHex(c.root)})`;

/**
 * The first half of a witness step: the fetched checkpoint against the kept one. A larger
 * tree is `prove`d next with `completeWitnessStep`; everything else is decided here.
 */
export function beginWitnessStep(input: {
  /** The signed note the witness kept, or null on its first run. */
  kept: string | null;
  /** The signed note just fetched. */
  latest: string;
  keys: readonly LogKey[];
  verify?: (signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array) => boolean;
}): WitnessStep {
  const previous = input.kept === null ? null : readCheckpointNote(input.kept);
  if (input.kept !== null && !previous) {
    throw new TypeError('the kept state is not a checkpoint');
  }
  const latest = verifySignedCheckpoint(input.latest, input.keys, input.verify);
  if (!latest.ok) return latest;
  const checkpoint = latest.checkpoint;
  if (!previous) return { ok: true, checkpoint, previous, prove: null, outcome: 'first' };
  if (checkpoint.origin !== previous.origin) {
    return refuse(
      'other_origin',
      `the checkpoint is of ${checkpoint.origin}, the witness follows ${previous.origin}`,
    );
  }
  if (checkpoint.size < previous.size) {
    return refuse(
      'rollback',
      `rollback: the log now signs ${describe(checkpoint)}, smaller than the kept ${describe(previous)}`,
    );
  }
  if (checkpoint.size === previous.size) {
    return sameRoot(checkpoint.root, previous.root)
      ? { ok: true, checkpoint, previous, prove: null, outcome: 'unchanged' }
      : refuse(
          'fork',
          `fork: two signed checkpoints of size ${checkpoint.size} with different roots: kept ${rootHex(previous.root)}, now ${rootHex(checkpoint.root)}`,
        );
  }
  return {
    ok: true,
    checkpoint,
    previous,
    prove: { from: previous.size, to: checkpoint.size },
    outcome: 'consistent',
  };
}

/**
 * Reads a consistency answer `{from, to, proof: [base64…]}` as the log serves it; null for
 * anything else (attacker-controlled).
 */
export function parseConsistencyAnswer(
  value: unknown,
  from: number,
  to: number,
): Uint8Array[] | null {
  if (typeof value !== 'object' || value === null) return null;
  const answer = value as { from?: unknown; to?: unknown; proof?: unknown };
  if (answer.from !== from || answer.to !== to || !Array.isArray(answer.proof)) return null;
  if (answer.proof.length > 128) return null;
  const proof: Uint8Array[] = [];
  for (const item of answer.proof) {
    const bytes = typeof item === 'string' ? fromBase64(item) : null;
    if (!bytes) return null;
    proof.push(bytes);
  }
  return proof;
}

/**
 * The second half: the consistency proof from the kept checkpoint to the new one. A proof
 * that does not verify is a fork — the log cannot show the kept tree is a prefix of the new.
 */
export function completeWitnessStep(
  step: Extract<WitnessStep, { ok: true }>,
  proof: readonly Uint8Array[] | null,
  hash?: HashBytes,
): WitnessStep {
  if (!step.prove || !step.previous) return step;
  const { previous, checkpoint } = step;
  if (
    !proof ||
    !verifyConsistency(previous.size, checkpoint.size, proof, previous.root, checkpoint.root, hash)
  ) {
    return refuse(
      'inconsistent',
      `fork: the log cannot prove ${describe(checkpoint)} extends the kept ${describe(previous)}: the consistency proof ${proof ? 'does not verify' : 'is malformed'}`,
    );
  }
  return { ...step, prove: null };
}

/** The outcome of one witness run, as svc-verify prints it with --json and the Action reports it. */
export interface WitnessReport {
  ok: boolean;
  outcome: WitnessOutcome | WitnessFailure;
  origin: string | null;
  previous_size: number | null;
  size: number | null;
  /** Hex of the accepted checkpoint's root hash. */
  root: string | null;
  reason: string;
  /** The refused checkpoint and the kept one: signed evidence of a fork or a rollback. */
  checkpoint?: string;
  kept?: string;
}

/**
 * One witness run over what the caller read: the kept note (null on first use) and the newest
 * signed checkpoint; `consistency(from, to)` fetches the parsed consistency answer (null when
 * there is none). The caller replaces its state with `latest` when the report is ok and the
 * outcome is not `unchanged`; `stateName` only names it in the reason. Throws a TypeError when
 * `kept` is not a checkpoint (the state is damaged: a usage problem, not the log's fault).
 */
export async function witnessLog(input: {
  kept: string | null;
  latest: string;
  keys: readonly LogKey[];
  consistency: (from: number, to: number) => Promise<unknown>;
  stateName: string;
  verify?: (signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array) => boolean;
  hash?: HashBytes;
}): Promise<WitnessReport> {
  const { kept, latest } = input;
  let step = beginWitnessStep({ kept, latest, keys: input.keys, verify: input.verify });
  if (step.ok && step.prove) {
    const { from, to } = step.prove;
    const answer = await input.consistency(from, to);
    step = completeWitnessStep(step, parseConsistencyAnswer(answer, from, to), input.hash);
  }
  if (!step.ok) {
    return {
      ok: false,
      outcome: step.failure,
      origin: null,
      previous_size: null,
      size: null,
      root: null,
      reason: step.reason,
      checkpoint: latest,
      ...(kept === null ? {} : { kept }),
    };
  }
  const { checkpoint, previous, outcome } = step;
  const where = `${checkpoint.origin} at size ${checkpoint.size} (root ${rootHex(checkpoint.root)})`;
  const reason =
    outcome === 'first'
      ? `no state yet: trusting ${where} on first use; kept in ${input.stateName}`
      : outcome === 'unchanged'
        ? `unchanged: ${where}`
        : `consistent: ${checkpoint.origin} grew from ${previous!.size} to ${checkpoint.size} (root ${rootHex(checkpoint.root)}); kept in ${input.stateName}`;
  return {
    ok: true,
    outcome,
    origin: checkpoint.origin,
    previous_size: previous?.size ?? null,
    size: checkpoint.size,
    root: rootHex(checkpoint.root),
    reason,
  };
}

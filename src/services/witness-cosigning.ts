import { type NoteKey, parseCosignerVerifierKey, parseNote, verifyCosignatures } from '@svc/verify';
import type { Clock } from '../ports/clock.js';
import type { LogTreeStore, StoredCheckpoint } from '../ports/log-tree.js';
import type { TransparencyLog } from './transparency-log.js';

/** A witness as configured (SVC_WITNESSES): its key name, cosigner vkey and submission prefix. */
export interface Witness {
  name: string;
  verifierKey: string;
  url: string;
}

export interface WitnessAnswer {
  status: number;
  body: string;
  location: string | null;
}

/** One HTTP POST: never follows a redirect, and gives up after `timeoutMs`. */
export type WitnessPost = (url: string, body: string, timeoutMs: number) => Promise<WitnessAnswer>;

export type CosignOutcome =
  | { witness: string; size: number; outcome: 'cosigned'; timestamp: number }
  | { witness: string; size: number; outcome: 'already_cosigned' }
  | { witness: string; size: number; outcome: 'failed'; reason: string };

/** Seconds a whole add-checkpoint exchange may take, unless configured. */
export const WITNESS_TIMEOUT_MS = 5_000;
/** A witness answers a few signature lines (or a size): more is not an answer. */
const MAX_ANSWER_BYTES = 16 * 1024;
/** A 409 names the witness's size; the call is repeated from it, a few times at most. */
const MAX_CONFLICTS = 2;
/** Cosignatures dated further in the future than this are refused (tlog-cosignature allows it). */
const FUTURE_SKEW_SECONDS = 600;

async function readCapped(res: Response): Promise<string> {
  if (!res.body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body) {
    size += chunk.byteLength;
    if (size > MAX_ANSWER_BYTES) {
      await res.body.cancel().catch(() => undefined);
      throw new Error(`the answer is larger than ${MAX_ANSWER_BYTES} bytes`);
    }
    chunks.push(chunk);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
}

/**
 * The add-checkpoint POST with fetch. The URLs are the operator's (SVC_WITNESSES), so no SSRF
 * guard; but a redirect is not followed (a witness has one submission prefix) and the whole
 * exchange, body included, is bounded by the timeout.
 */
export const fetchWitnessPost: WitnessPost = async (url, body, timeoutMs) => {
  const res = await fetch(url, {
    method: 'POST',
    body,
    headers: { 'Content-Type': 'text/plain; charset=utf-8' },
    redirect: 'manual',
    signal: AbortSignal.timeout(timeoutMs),
  });
  return { status: res.status, body: await readCapped(res), location: res.headers.get('location') };
};

const printable = (text: string) =>
  text
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u001f\u007f]+/gu, ' ')
    .trim()
    .slice(0, 200);

/** Why a witness refused, in words an operator can act on (tlog-witness's status codes). */
function refusal(answer: WitnessAnswer, origin: string): string {
  const said = printable(answer.body);
  const tail = said ? `: ${said}` : '';
  switch (answer.status) {
    case 400:
      return `400 Bad Request: the witness refused the request as malformed${tail}`;
    case 403:
      return `403 Forbidden: the witness does not trust the key that signed the checkpoint (give it the log's verifier key)${tail}`;
    case 404:
      return `404 Not Found: the witness does not know the log ${origin} (or the URL is not its submission prefix)${tail}`;
    case 422:
      return `422 Unprocessable Entity: the witness found the checkpoint inconsistent with the one it cosigned last${tail}`;
    default:
      if (answer.status >= 300 && answer.status < 400) {
        return `HTTP ${answer.status} to ${answer.location ?? '(no location)'}: redirects are not followed`;
      }
      return `HTTP ${answer.status}${tail}`;
  }
}

const errorText = (error: unknown) => {
  const e = error as { name?: string; message?: string; cause?: { code?: string } };
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return 'timed out';
  return e.cause?.code ?? e.message ?? String(error);
};

/**
 * Sends new checkpoints to the configured witnesses (C2SP tlog-witness add-checkpoint) and
 * stores their cosignatures once they verify under the witness's configured key. A witness
 * that fails is tried again with the next checkpoint; nothing here blocks an append.
 */
export class WitnessCosigning {
  private readonly witnesses: { witness: Witness; key: NoteKey }[];
  /** The size each witness last cosigned for this service (a verified 200). */
  private readonly known = new Map<string, number>();
  /** The checkpoint size each witness was last sent. */
  private readonly attempted = new Map<string, number>();
  /** When (clock ms) each witness was last sent a checkpoint. */
  private readonly sentAt = new Map<string, number>();
  private running = false;

  constructor(
    private readonly deps: {
      log: TransparencyLog;
      tree: LogTreeStore;
      witnesses: readonly Witness[];
      clock: Clock;
      post?: WitnessPost;
      timeoutMs?: number;
      /**
       * The least time between two checkpoints sent to one witness (SVC_WITNESS_MIN_INTERVAL):
       * public witness networks admit about one a minute per log. Checkpoints are still made
       * as often as before; a witness is sent the newest one once the interval has passed.
       * Default 0: every new checkpoint.
       */
      minIntervalMs?: number;
    },
  ) {
    this.witnesses = deps.witnesses.map((witness) => {
      const key = parseCosignerVerifierKey(witness.verifierKey);
      if (!key || key.name !== witness.name) {
        throw new TypeError(`witness ${witness.name}: not a cosigner verifier key`);
      }
      return { witness, key };
    });
  }

  /**
   * Sends the newest stored checkpoint to every witness not yet sent that size and not sent
   * one within `minIntervalMs`. A round still running (a slow witness) makes this call do
   * nothing: the next one sends the newest then.
   */
  async cosignLatest(): Promise<CosignOutcome[]> {
    if (this.running || this.witnesses.length === 0) return [];
    this.running = true;
    try {
      const checkpoint = await this.deps.log.latestCheckpoint();
      if (!checkpoint) return [];
      const now = this.deps.clock.now();
      const interval = this.deps.minIntervalMs ?? 0;
      const due = this.witnesses.filter((w) => {
        const last = this.sentAt.get(w.witness.name);
        return (
          this.attempted.get(w.witness.name) !== checkpoint.size &&
          (last === undefined || now - last >= interval)
        );
      });
      for (const w of due) {
        this.attempted.set(w.witness.name, checkpoint.size);
        this.sentAt.set(w.witness.name, now);
      }
      return await Promise.all(due.map((w) => this.cosignOne(w.witness, w.key, checkpoint)));
    } finally {
      this.running = false;
    }
  }

  private async cosignOne(
    witness: Witness,
    key: NoteKey,
    checkpoint: StoredCheckpoint,
  ): Promise<CosignOutcome> {
    const size = checkpoint.size;
    const failed = (reason: string): CosignOutcome => ({
      witness: witness.name,
      size,
      outcome: 'failed',
      reason,
    });
    try {
      const stored = await this.deps.tree.cosignaturesOf(size);
      if (stored.some((c) => c.witness === witness.name)) {
        return { witness: witness.name, size, outcome: 'already_cosigned' };
      }
      const text = parseNote(checkpoint.note)!.text;
      const post = this.deps.post ?? fetchWitnessPost;
      let old =
        this.known.get(witness.name) ?? (await this.deps.tree.lastCosignedSize(witness.name)) ?? 0;
      for (let conflicts = 0; ; conflicts++) {
        if (old > size) {
          return failed(
            `the witness has cosigned a tree of ${old} leaves, larger than this checkpoint's ${size}: it has seen another history of this log`,
          );
        }
        const { proof } = await this.deps.log.consistency(old, size);
        const body = `old ${old}\n${proof.map((hash) => `${hash}\n`).join('')}\n${checkpoint.note}`;
        let answer: WitnessAnswer;
        try {
          answer = await post(
            `${witness.url}/add-checkpoint`,
            body,
            this.deps.timeoutMs ?? WITNESS_TIMEOUT_MS,
          );
        } catch (error) {
          return failed(`unreachable: ${errorText(error)}`);
        }
        if (answer.status === 409) {
          // The witness's size: tlog-witness requires it as the body of a 409.
          const match = /^(0|[1-9][0-9]{0,15})\n$/.exec(answer.body);
          if (!match) return failed('409 Conflict without a tree size in its body');
          // Attacker-controlled (a witness may be wrong or hostile): the size steers this round
          // only and is never kept, or one answer of 9999999999999999 would silence the
          // witness until a restart. Only a verified cosignature moves `known`.
          const theirs = Number(match[1]);
          if (!Number.isSafeInteger(theirs)) return failed('409 Conflict naming no usable size');
          if (theirs === old) return failed(`409 Conflict naming the size sent (${old})`);
          if (conflicts >= MAX_CONFLICTS) return failed('409 Conflict again and again');
          old = theirs;
          continue;
        }
        if (answer.status !== 200) return failed(refusal(answer, this.deps.log.origin));
        const verified = verifyCosignatures(text, answer.body, key, {
          notAfter: Math.floor(this.deps.clock.now() / 1000) + FUTURE_SKEW_SECONDS,
        });
        if (!verified.ok) return failed(`bad cosignature: ${verified.reason}`);
        const cosignature = verified.cosignatures[0]!;
        await this.deps.tree.addCosignature({
          size,
          witness: witness.name,
          line: cosignature.line,
          timestamp: cosignature.timestamp,
          created_at: new Date(this.deps.clock.now()).toISOString(),
        });
        this.known.set(witness.name, size);
        return {
          witness: witness.name,
          size,
          outcome: 'cosigned',
          timestamp: cosignature.timestamp,
        };
      }
    } catch (error) {
      return failed(errorText(error));
    }
  }
}

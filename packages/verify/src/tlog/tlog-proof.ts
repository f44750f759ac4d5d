import { fromBase64, toBase64 } from '../encoding.js';
import { HASH_SIZE } from './merkle.js';
import { parseCheckpointText, parseNote } from './note.js';
import {
  MAX_CHECKPOINT_CHARS,
  MAX_INCLUSION_HASHES,
  type ReceiptInclusionProof,
} from './receipt-inclusion.js';

// C2SP tlog-proof@v1 (§Format): a text file holding the entry's index, its RFC 6962 inclusion
// proof and the checkpoint (with witness cosignatures) the proof leads to, so that a receipt
// and its `.tlog-proof` verify offline. The file is attacker-controlled: parsing is strict
// (one spelling per proof) and a problem is a reason, never an exception.

export const TLOG_PROOF_HEADER = 'c2sp.org/tlog-proof@v1';
export const TLOG_PROOF_MEDIA_TYPE = 'text/x-tlog-proof';
/** The header, extra, index, 64 hashes, the empty line and a checkpoint: well under this. */
export const MAX_TLOG_PROOF_CHARS = MAX_CHECKPOINT_CHARS + 8 * 1024;

export interface TlogProof {
  /** Unauthenticated extra data (§Format: never trusted implicitly); svc writes none. */
  extra: Uint8Array | null;
  index: number;
  /** The inclusion proof, from the leaf's sibling up to the root's child. */
  proof: Uint8Array[];
  /** The signed checkpoint, verbatim, cosignature lines included. */
  checkpoint: string;
}

/** The tlog-proof text of an entry. */
export function formatTlogProof(input: TlogProof): string {
  if (!Number.isSafeInteger(input.index) || input.index < 0) throw new TypeError('bad index');
  if (input.proof.some((h) => h.length !== HASH_SIZE)) throw new TypeError('a hash is 32 bytes');
  if (!parseNote(input.checkpoint)) throw new TypeError('not a signed checkpoint');
  const extra = input.extra && input.extra.length > 0 ? `extra ${toBase64(input.extra)}\n` : '';
  const hashes = input.proof.map((h) => `${toBase64(h)}\n`).join('');
  return `${TLOG_PROOF_HEADER}\n${extra}index ${input.index}\n${hashes}\n${input.checkpoint}`;
}

/** Whether a file looks like a tlog-proof rather than JSON (for options that take either). */
export const isTlogProofText = (text: string): boolean => text.startsWith(`${TLOG_PROOF_HEADER}\n`);

/** Parses a tlog-proof; `problem` names what is wrong. */
export function parseTlogProof(text: string): { proof: TlogProof } | { problem: string } {
  if (text.length > MAX_TLOG_PROOF_CHARS)
    return { problem: `longer than ${MAX_TLOG_PROOF_CHARS} characters` };
  const split = text.indexOf('\n\n');
  if (split < 0) return { problem: 'no empty line before the checkpoint' };
  const lines = text.slice(0, split).split('\n');
  const checkpoint = text.slice(split + 2);
  if (lines[0] !== TLOG_PROOF_HEADER)
    return { problem: `the first line is not ${TLOG_PROOF_HEADER}` };
  let at = 1;
  let extra: Uint8Array | null = null;
  if (lines[at]?.startsWith('extra ')) {
    extra = fromBase64(lines[at]!.slice('extra '.length));
    if (!extra || extra.length === 0) return { problem: 'the extra line is not base64 data' };
    at += 1;
  }
  const indexMatch = /^index (0|[1-9][0-9]{0,15})$/.exec(lines[at] ?? '');
  if (!indexMatch)
    return {
      problem: `line ${at + 1} is not "index <decimal>" (no leading zeros): ${JSON.stringify((lines[at] ?? '').slice(0, 80))}`,
    };
  const index = Number(indexMatch[1]);
  if (!Number.isSafeInteger(index)) return { problem: 'the index is too large' };
  const hashLines = lines.slice(at + 1);
  if (hashLines.length > MAX_INCLUSION_HASHES)
    return { problem: `more than ${MAX_INCLUSION_HASHES} proof hashes` };
  const proof: Uint8Array[] = [];
  for (const [i, line] of hashLines.entries()) {
    const bytes = line.length <= 64 ? fromBase64(line) : null;
    if (!bytes || bytes.length !== HASH_SIZE)
      return {
        problem: `line ${at + 2 + i} is not the base64 of a 32-byte hash: ${JSON.stringify(line.slice(0, 80))}`,
      };
    proof.push(bytes);
  }
  const note = parseNote(checkpoint);
  if (!note || !parseCheckpointText(note.text))
    return { problem: 'what follows the empty line is not a signed checkpoint' };
  return { proof: { extra, index, proof, checkpoint } };
}

/**
 * The proof in the shape `GET /v1/receipts/:id/proof` answers as JSON, so the one inclusion
 * check (`checkInclusion`) verifies both: the tree size is the checkpoint's own.
 */
export function tlogProofAsInclusion(proof: TlogProof): ReceiptInclusionProof {
  const body = parseCheckpointText(parseNote(proof.checkpoint)!.text)!;
  return {
    leaf_index: proof.index,
    tree_size: body.size,
    inclusion: proof.proof.map(toBase64),
    checkpoint: proof.checkpoint,
  };
}

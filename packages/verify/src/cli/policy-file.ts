import { readFile } from 'node:fs/promises';
import { isVerifyError } from '../errors.js';
import {
  judgeWitnesses,
  parseTlogPolicy,
  type TlogPolicy,
  type WitnessVerdict,
} from '../tlog/tlog-policy.js';
import { UnusableError } from './log-audit.js';

// The C2SP tlog-policy side of svc-verify: reading --policy files and judging a checkpoint's
// witness cosignatures against them, for receipts (--proof), `witness` and `ledger` alike.

/** Cosignatures dated further ahead than this are refused (tlog-cosignature allows it). */
const FUTURE_SKEW_SECONDS = 600;

/** The policy verdict on a checkpoint note now, allowing witnesses' clocks some skew. */
export const judgeNow = (note: string, policy: TlogPolicy): WitnessVerdict =>
  judgeWitnesses(note, policy, Math.floor(Date.now() / 1000) + FUTURE_SKEW_SECONDS);

/** Reads and parses a --policy file; a bad file is unusable input (exit 2). */
export async function readPolicyFile(path: string): Promise<TlogPolicy> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new UnusableError(`cannot read the policy ${path}: ${(error as Error).message}`);
  }
  try {
    return parseTlogPolicy(text);
  } catch (error) {
    if (isVerifyError(error)) throw new UnusableError(`--policy ${path}: ${error.message}`);
    throw error;
  }
}

/** The witness lines of a table: one per policy witness, then the verdict. */
export function witnessLines(verdict: WitnessVerdict): string[] {
  const lines: string[] = [];
  for (const w of verdict.report?.witnesses ?? [])
    lines.push(
      `witness       ${w.cosigned ? 'cosigned  ' : 'missing   '} ${w.name} (${w.key_name}, ${w.kind})${w.timestamp === undefined ? '' : ` at ${new Date(w.timestamp * 1000).toISOString()}`}`,
    );
  lines.push(`quorum        ${verdict.ok ? 'MET' : 'NOT MET'}: ${verdict.reason}`);
  return lines;
}

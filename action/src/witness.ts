import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseStrictJson, witnessLog, type WitnessReport } from '@svc/verify';
import { ActionFailure } from './failure.js';
import { callSvc, describeFailure, type HttpDeps } from './http.js';

// The Action as a witness of svc's log: the checks are the core's (core/tlog/witness.ts);
// here are only the requests and the state file, which actions/cache carries between runs.

function readState(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new ActionFailure(`cannot read witness-state ${path}: ${(error as Error).message}`);
  }
}

/** Replaces the state whole or not at all: a cancelled job must not leave half a checkpoint. */
function writeState(path: string, note: string): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.tmp-${process.pid}-${Date.now()}`;
  try {
    writeFileSync(tmp, note);
    renameSync(tmp, path);
  } catch (error) {
    rmSync(tmp, { force: true });
    throw new ActionFailure(`cannot write witness-state ${path}: ${(error as Error).message}`);
  }
}

/**
 * One witness run against svc at `apiUrl`: fetch the newest checkpoint, verify it under
 * `keys`, prove it consistent with the one kept at `statePath`, and keep it there. On any
 * refusal the state file is left as it was and the report says why (ok false).
 */
export async function witnessCheckpoint(
  apiUrl: string,
  statePath: string,
  keys: Uint8Array[],
  http: HttpDeps,
): Promise<WitnessReport & { note: string }> {
  const kept = readState(statePath);
  const res = await callSvc(`${apiUrl}/v1/log/checkpoint`, { method: 'GET' }, http);
  if (res.status !== 200) throw new ActionFailure(describeFailure(res, 'the checkpoint request'));
  let report: WitnessReport;
  try {
    report = await witnessLog({
      kept,
      latest: res.text,
      keys,
      stateName: statePath,
      async consistency(from, to) {
        const answer = await callSvc(
          `${apiUrl}/v1/log/consistency?from=${from}&to=${to}`,
          { method: 'GET' },
          http,
        );
        if (answer.status !== 200) return null;
        try {
          return parseStrictJson(answer.text);
        } catch {
          return null;
        }
      },
    });
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
    throw new ActionFailure(
      `witness-state ${statePath} does not hold a checkpoint; delete it (or its cache entry) to start over`,
    );
  }
  if (report.ok && report.outcome !== 'unchanged') writeState(statePath, res.text);
  // The checkpoint as served, cosignatures included, for a witness-policy to judge.
  return { ...report, note: res.text };
}

import type { DryRunResult } from './svc-gate.js';

// Which tools tools/list hides: those the policy blocks by name. A tool is hidden when svc's
// dry run (POST /v1/simulate, which records nothing) of a call of it with empty arguments is
// BLOCKED, as it is under a rule such as `if: { tool: mcp__everything__get-env }` with
// `never: true`. Hiding spares the agent a tool it cannot use; it is not the gate: every call,
// of a listed tool or not, is still decided by svc. So listing fails open (a tool svc could
// not be asked about is listed) while calls fail closed.

export interface ToolVisibilityOptions {
  /** svc's dry run of a call of the tool (its `mcp__<server>__<tool>` name) with `{}`. */
  dryRun: (toolName: string) => Promise<DryRunResult>;
  /** How long a verdict is reused: a policy may change while the gateway runs. */
  ttlMs: number;
  /** How many dry runs are in flight at once. */
  parallel: number;
  log: (line: string) => void;
}

/** Bound on the verdicts kept: the upstreams' tools, unless a server lists without end. */
const MAX_KEPT = 10_000;

export class ToolVisibility {
  private readonly known = new Map<string, { blocked: boolean; until: number }>();

  constructor(private readonly options: ToolVisibilityOptions) {}

  /** The names among `names` to hide; those svc could not be asked about are shown. */
  async blocked(names: readonly string[]): Promise<Set<string>> {
    const now = Date.now();
    const todo = [...new Set(names)].filter((name) => (this.known.get(name)?.until ?? 0) <= now);
    if (this.known.size + todo.length > MAX_KEPT) this.known.clear();
    let next = 0;
    let problem: string | undefined;
    const worker = async () => {
      // After one failure the rest would fail alike (svc down or slow): they are shown.
      while (problem === undefined && next < todo.length) {
        const name = todo[next++]!;
        const result = await this.options.dryRun(name);
        if (result.ok) {
          this.known.set(name, {
            blocked: result.verdict === 'BLOCKED',
            until: now + this.options.ttlMs,
          });
        } else {
          problem ??= result.problem;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.options.parallel, todo.length) }, worker));
    if (problem !== undefined) {
      this.options.log(
        `tools/list: tools svc could not be asked about are listed (calls are still decided): ${problem}`,
      );
    }
    return new Set(names.filter((name) => this.known.get(name)?.blocked === true));
  }
}

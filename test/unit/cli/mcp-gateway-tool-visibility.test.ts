import { describe, expect, it } from '@jest/globals';
import type { DryRunResult } from '../../../src/cli/mcp-gateway/svc-gate.js';
import { ToolVisibility } from '../../../src/cli/mcp-gateway/tool-visibility.js';

// Which tools tools/list hides: those whose dry run is BLOCKED, asked a bounded number at a
// time, remembered for a while, and shown when svc cannot be asked.

function visibility(answer: (name: string) => DryRunResult, ttlMs = 60_000, parallel = 3) {
  const asked: string[] = [];
  const logged: string[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const v = new ToolVisibility({
    dryRun: async (name) => {
      asked.push(name);
      maxInFlight = Math.max(maxInFlight, ++inFlight);
      await new Promise((r) => setTimeout(r, 5));
      inFlight--;
      return answer(name);
    },
    ttlMs,
    parallel,
    log: (line) => logged.push(line),
  });
  return { v, asked, logged, maxInFlight: () => maxInFlight };
}

describe('ToolVisibility', () => {
  const names = Array.from({ length: 10 }, (_, i) => `mcp__s__t${i}`);
  const blockEven = (name: string): DryRunResult => ({
    ok: true,
    verdict: Number(name.slice(-1)) % 2 === 0 ? 'BLOCKED' : 'ESCALATED',
  });

  it('hides the tools whose dry run is BLOCKED, asking at most `parallel` at once', async () => {
    const t = visibility(blockEven);
    const hidden = await t.v.blocked(names);
    expect([...hidden].sort()).toEqual([
      'mcp__s__t0',
      'mcp__s__t2',
      'mcp__s__t4',
      'mcp__s__t6',
      'mcp__s__t8',
    ]);
    expect(t.asked.sort()).toEqual([...names].sort());
    expect(t.maxInFlight()).toBe(3);
    expect(t.logged).toEqual([]);
  });

  it('asks again only once a verdict is older than the TTL', async () => {
    const t = visibility(blockEven);
    await t.v.blocked(names);
    await t.v.blocked(names);
    expect(t.asked).toHaveLength(10);
    const short = visibility(blockEven, 1);
    await short.v.blocked(names);
    await new Promise((r) => setTimeout(r, 5));
    await short.v.blocked(names);
    expect(short.asked).toHaveLength(20);
  });

  it('shows every tool when svc cannot be asked, stops asking after the first failure, and logs it', async () => {
    const t = visibility(
      () => ({ ok: false, problem: 'svc cannot be reached at http://x: ECONNREFUSED' }),
      60_000,
      1,
    );
    expect((await t.v.blocked(names)).size).toBe(0);
    expect(t.asked).toHaveLength(1);
    expect(t.logged).toEqual([expect.stringContaining('ECONNREFUSED')]);
    // Not remembered: the next listing asks again.
    await t.v.blocked(names);
    expect(t.asked).toHaveLength(2);
  });
});

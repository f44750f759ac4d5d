import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parseEvent } from '@svc/hook';
import { pino } from 'pino';
import { loadConfig } from '../src/config/config.js';
import { claimInputSchema } from '../src/core/claim-schema.js';
import { openLedgerRuntime } from '../src/runtime/open-ledger.js';
import { apiKeySubmitter } from '../src/services/claims.js';
import { HOOK_SESSIONS, hookEvent, toolCallClaim } from './agent-requests.js';
import { benchClaim } from './claims.js';
import { percentile } from './latency.js';

// The cost of one decision in process, through the services the HTTP routes call (no HTTP,
// no load generator): the CPU of this process and the bytes it writes (/proc/self/io wchar:
// the ledger's WAL, checkpoints and any temporary file) per decision. Rounds of each kind
// alternate, HOOK_SESSIONS decisions at a time so that group commits gather as under load.
// Without the HTTP stack and a second process on the machine, its spread is a fraction of
// the HTTP scenarios'; the bytes written do not depend on the machine at all.

const USAGE = `usage: npm run bench:decision -- [options]
The CPU and the bytes written per decision, in process, for each kind:
  evaluate        a pull request's claim under the default policy (the evaluate scenario's)
  evaluate-agent  a coding agent's tool call as a claim under the agent policy
  hook            the same tool call as a Claude Code PreToolUse event (AgentHookService)
options:
  --kinds <a,b>     kinds to run (default all three)
  --rounds <n>      measured rounds of each kind, alternating (default 5)
  --per-round <n>   decisions per round (default 1200)
  --json            print the results as JSON
  --help            this text`;

type Kind = 'evaluate' | 'evaluate-agent' | 'hook';
const KINDS: Kind[] = ['evaluate', 'evaluate-agent', 'hook'];

function options() {
  const { values } = parseArgs({
    options: {
      kinds: { type: 'string' },
      rounds: { type: 'string' },
      'per-round': { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const kinds = (values.kinds?.split(',') ?? KINDS) as Kind[];
  const unknown = kinds.filter((k) => !KINDS.includes(k));
  if (unknown.length > 0) {
    console.error(`unknown kind ${unknown.join(', ')}\n${USAGE}`);
    process.exit(2);
  }
  const count = (v: string | undefined, fallback: number) => {
    const n = v === undefined ? fallback : Number(v);
    if (!Number.isInteger(n) || n < 1) {
      console.error(`not a positive integer: ${v}\n${USAGE}`);
      process.exit(2);
    }
    return n;
  };
  return {
    kinds,
    rounds: count(values.rounds, 5),
    perRound: count(values['per-round'], 1200),
    json: values.json,
  };
}

const written = () =>
  Number(/wchar:\s*(\d+)/.exec(readFileSync('/proc/self/io', 'utf8'))?.[1] ?? Number.NaN);

async function main() {
  const { kinds, rounds, perRound, json } = options();
  const dir = mkdtempSync(join(tmpdir(), 'svc-decision-cost-'));
  const config = loadConfig({ ...process.env, SVC_DATA_DIR: dir, LOG_LEVEL: 'silent' });
  const runtime = await openLedgerRuntime(config, pino({ level: 'silent' }));
  // An account of its own: its scope keeps every claim_id new.
  const context = apiKeySubmitter({
    id: 'bench-account',
    keyId: 'kid_bench',
    lockedPolicy: null,
  } as Parameters<typeof apiKeySubmitter>[0]);
  let n = 0;
  const decide: Record<Kind, (i: number) => Promise<unknown>> = {
    evaluate: (i) =>
      runtime.claims.evaluate(claimInputSchema.parse(benchClaim(i, `dc-ev-${i}`)), context),
    'evaluate-agent': (i) =>
      runtime.claims.evaluate(
        claimInputSchema.parse(toolCallClaim(i % HOOK_SESSIONS, i, 'dc-ea-')),
        context,
      ),
    hook: async (i) => {
      const parsed = parseEvent('claude-code', JSON.parse(hookEvent(i % HOOK_SESSIONS, i, 'dc-')));
      if (!parsed.ok) throw new Error(parsed.error);
      const answer = await runtime.agentHooks.handle(
        { harness: 'claude-code', event: parsed.event, canAsk: true },
        context,
      );
      if (answer.exit_code === undefined) throw new Error('no hook answer');
    },
  };
  const round = async (kind: Kind, decisions: number) => {
    const bytes = written();
    const cpu = process.cpuUsage();
    for (let done = 0; done < decisions; done += HOOK_SESSIONS) {
      await Promise.all(Array.from({ length: HOOK_SESSIONS }, () => decide[kind](n++)));
    }
    const used = process.cpuUsage(cpu);
    return {
      cpu_us: (used.user + used.system) / decisions,
      bytes: (written() - bytes) / decisions,
    };
  };
  try {
    // Warm-up: the JIT, the caches and a ledger that is not empty.
    for (const kind of kinds) await round(kind, Math.ceil(perRound / 3));
    const results = Object.fromEntries(
      kinds.map((k) => [k, [] as { cpu_us: number; bytes: number }[]]),
    );
    for (let r = 0; r < rounds; r++) {
      for (const kind of kinds) {
        results[kind]!.push(await round(kind, perRound));
        if (!json) process.stderr.write(`round ${r + 1}/${rounds} ${kind}\n`);
      }
    }
    const summary = kinds.map((kind) => {
      const cpu = Float64Array.from(results[kind]!.map((x) => x.cpu_us)).sort();
      const bytes = Float64Array.from(results[kind]!.map((x) => x.bytes)).sort();
      return {
        kind,
        cpu_us_median: Math.round(percentile(cpu, 50)),
        cpu_us_min: Math.round(cpu[0]!),
        cpu_us_max: Math.round(cpu.at(-1)!),
        bytes_written_median: Math.round(percentile(bytes, 50)),
      };
    });
    const base = summary.find((s) => s.kind === 'evaluate')?.cpu_us_median;
    if (json) {
      console.log(JSON.stringify({ rounds, per_round: perRound, summary }, null, 2));
      return;
    }
    console.log(`${rounds} rounds of ${perRound} decisions each, ${HOOK_SESSIONS} at a time`);
    console.log(
      '| kind | CPU µs/decision, median (min–max) | × evaluate | bytes written/decision |',
    );
    console.log('|---|--:|--:|--:|');
    for (const s of summary)
      console.log(
        `| ${s.kind} | ${s.cpu_us_median} (${s.cpu_us_min}–${s.cpu_us_max}) | ` +
          `${base ? (s.cpu_us_median / base).toFixed(2) : '—'} | ${s.bytes_written_median.toLocaleString('en-US')} |`,
      );
  } finally {
    await runtime.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();

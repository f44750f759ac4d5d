import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { parseEvent } from '@svc/hook';
import { pino } from 'pino';
import type { loadConfig as LoadConfig } from '../src/config/config.js';
import type { claimInputSchema as ClaimInputSchema } from '../src/core/claim-schema.js';
import type { openLedgerRuntime as OpenLedgerRuntime } from '../src/runtime/open-ledger.js';
import type { apiKeySubmitter as ApiKeySubmitter } from '../src/services/claims.js';
import { HOOK_SESSIONS, hookEvent, toolCallClaim } from './agent-requests.js';
import { benchClaim } from './claims.js';
import { percentile } from './latency.js';

// The cost of one decision in process, through the services the HTTP routes call (no HTTP,
// no load generator): the CPU of this process and the bytes it writes (/proc/self/io wchar:
// the ledger's WAL, checkpoints and any temporary file) per decision. Rounds of each kind
// alternate, HOOK_SESSIONS decisions at a time so that group commits gather as under load.
// Without the HTTP stack and a second process on the machine, its spread is a fraction of
// the HTTP scenarios'; the bytes written do not depend on the machine at all. With
// --against, another build's services run in the same process, each on a ledger of its own,
// in rounds alternating with this build's: both meet the same machine, round by round.

const USAGE = `usage: npm run bench:decision -- [options]
The CPU and the bytes written per decision, in process, for each kind:
  evaluate        a pull request's claim under the default policy (the evaluate scenario's)
  evaluate-agent  a coding agent's tool call as a claim under the agent policy
  hook            the same tool call as a Claude Code PreToolUse event (AgentHookService)
options:
  --kinds <a,b>     kinds to run (default all three)
  --rounds <n>      measured rounds of each kind, alternating (default 5)
  --per-round <n>   decisions per round (default 1200)
  --against <dist>  another build's dist directory (e.g. ../svc-before/dist), run in the same
                    process in alternating rounds; the table adds its figures and the ratio
                    of this build's to its, round by round
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
      against: { type: 'string' },
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
    against: values.against === undefined ? null : resolve(values.against),
    json: values.json,
  };
}

const written = () =>
  Number(/wchar:\s*(\d+)/.exec(readFileSync('/proc/self/io', 'utf8'))?.[1] ?? Number.NaN);

/** This build's dist directory (where this file runs from). */
const THIS_BUILD = fileURLToPath(new URL('..', import.meta.url));

interface Build {
  decide: Record<Kind, (i: number) => Promise<unknown>>;
  close(): Promise<void>;
}

/**
 * The services of the build in `dist`, over a new ledger of their own. The events and claims
 * are this build's (the same for both builds), decided by that build's services.
 */
async function openBuild(dist: string, tag: string): Promise<Build> {
  const load = <T>(path: string) => import(pathToFileURL(join(dist, path)).href) as Promise<T>;
  const { loadConfig } = await load<{ loadConfig: typeof LoadConfig }>('src/config/config.js');
  const { openLedgerRuntime } = await load<{ openLedgerRuntime: typeof OpenLedgerRuntime }>(
    'src/runtime/open-ledger.js',
  );
  const { apiKeySubmitter } = await load<{ apiKeySubmitter: typeof ApiKeySubmitter }>(
    'src/services/claims.js',
  );
  const { claimInputSchema } = await load<{ claimInputSchema: typeof ClaimInputSchema }>(
    'src/core/claim-schema.js',
  );
  const dir = mkdtempSync(join(tmpdir(), 'svc-decision-cost-'));
  const config = loadConfig({ ...process.env, SVC_DATA_DIR: dir, LOG_LEVEL: 'silent' });
  const runtime = await openLedgerRuntime(config, pino({ level: 'silent' }));
  // An account of its own: its scope keeps every claim_id new.
  const context = apiKeySubmitter({
    id: 'bench-account',
    keyId: 'kid_bench',
    lockedPolicy: null,
  } as Parameters<typeof ApiKeySubmitter>[0]);
  return {
    decide: {
      evaluate: (i) =>
        runtime.claims.evaluate(claimInputSchema.parse(benchClaim(i, `${tag}ev-${i}`)), context),
      'evaluate-agent': (i) =>
        runtime.claims.evaluate(
          claimInputSchema.parse(toolCallClaim(i % HOOK_SESSIONS, i, `${tag}ea-`)),
          context,
        ),
      hook: async (i) => {
        const event = JSON.parse(hookEvent(i % HOOK_SESSIONS, i, tag));
        const parsed = parseEvent('claude-code', event);
        if (!parsed.ok) throw new Error(parsed.error);
        const answer = await runtime.agentHooks.handle(
          { harness: 'claude-code', event: parsed.event, canAsk: true },
          context,
        );
        if (answer.exit_code === undefined) throw new Error('no hook answer');
      },
    },
    async close() {
      await runtime.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

interface Round {
  cpu_us: number;
  bytes: number;
}

let n = 0;
async function round(build: Build, kind: Kind, decisions: number): Promise<Round> {
  const bytes = written();
  const cpu = process.cpuUsage();
  for (let done = 0; done < decisions; done += HOOK_SESSIONS) {
    await Promise.all(Array.from({ length: HOOK_SESSIONS }, () => build.decide[kind](n++)));
  }
  const used = process.cpuUsage(cpu);
  return { cpu_us: (used.user + used.system) / decisions, bytes: (written() - bytes) / decisions };
}

const median = (values: number[]) => percentile(Float64Array.from(values).sort(), 50);

function summaryOf(kind: Kind, rounds: Round[]) {
  const cpu = Float64Array.from(rounds.map((x) => x.cpu_us)).sort();
  return {
    kind,
    cpu_us_median: Math.round(percentile(cpu, 50)),
    cpu_us_min: Math.round(cpu[0]!),
    cpu_us_max: Math.round(cpu.at(-1)!),
    bytes_written_median: Math.round(median(rounds.map((x) => x.bytes))),
  };
}

async function main() {
  const { kinds, rounds, perRound, against, json } = options();
  const builds = [await openBuild(THIS_BUILD, 'dc-')];
  if (against) builds.push(await openBuild(against, 'dc-b-'));
  try {
    // Warm-up: the JIT, the caches and ledgers that are not empty.
    for (const kind of kinds)
      for (const build of builds) await round(build, kind, Math.ceil(perRound / 3));
    const results = builds.map(() => Object.fromEntries(kinds.map((k) => [k, [] as Round[]])));
    for (let r = 0; r < rounds; r++) {
      for (const kind of kinds) {
        for (const [b, build] of builds.entries())
          results[b]![kind]!.push(await round(build, kind, perRound));
        if (!json) process.stderr.write(`round ${r + 1}/${rounds} ${kind}\n`);
      }
    }
    const summary = kinds.map((kind) => summaryOf(kind, results[0]![kind]!));
    const other = against ? kinds.map((kind) => summaryOf(kind, results[1]![kind]!)) : null;
    // This build's CPU over the other's, round by round (the rounds that met the same machine).
    const ratios = kinds.map((kind) =>
      against
        ? results[0]!
            [kind]!.map((x, i) => x.cpu_us / results[1]![kind]![i]!.cpu_us)
            .sort((a, b) => a - b)
        : [],
    );
    if (json) {
      console.log(
        JSON.stringify(
          {
            rounds,
            per_round: perRound,
            summary,
            ...(against && {
              against: { dist: against, summary: other },
              cpu_ratio_per_round: Object.fromEntries(kinds.map((k, i) => [k, ratios[i]])),
            }),
          },
          null,
          2,
        ),
      );
      return;
    }
    console.log(`${rounds} rounds of ${perRound} decisions each, ${HOOK_SESSIONS} at a time`);
    const base = summary.find((s) => s.kind === 'evaluate')?.cpu_us_median;
    const fmt = (s: ReturnType<typeof summaryOf>) =>
      `${s.cpu_us_median} (${s.cpu_us_min}–${s.cpu_us_max})`;
    if (!other) {
      console.log(
        '| kind | CPU µs/decision, median (min–max) | × evaluate | bytes written/decision |',
      );
      console.log('|---|--:|--:|--:|');
      for (const s of summary)
        console.log(
          `| ${s.kind} | ${fmt(s)} | ${base ? (s.cpu_us_median / base).toFixed(2) : '—'} | ` +
            `${s.bytes_written_median.toLocaleString('en-US')} |`,
        );
      return;
    }
    console.log(`against ${against}`);
    console.log(
      '| kind | CPU µs, this build | CPU µs, against | this / against per round, median (min–max) | bytes written, this / against |',
    );
    console.log('|---|--:|--:|--:|--:|');
    summary.forEach((s, i) => {
      const o = other[i]!;
      const r = ratios[i]!;
      console.log(
        `| ${s.kind} | ${fmt(s)} | ${fmt(o)} | ${median(r).toFixed(3)} (${r[0]!.toFixed(2)}–${r.at(-1)!.toFixed(2)}) | ` +
          `${s.bytes_written_median.toLocaleString('en-US')} / ${o.bytes_written_median.toLocaleString('en-US')} |`,
      );
    });
  } finally {
    for (const build of builds) await build.close();
  }
}

await main();

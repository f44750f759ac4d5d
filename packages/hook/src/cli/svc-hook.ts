import { readFileSync } from 'node:fs';
import { forward } from '../forward.js';
import { originRepository } from './git-remote.js';
import { loadHarness } from '../harnesses/load.js';
import { EXIT_HEADER, hookPath, isRepository, MAX_REPOSITORY } from '../protocol.js';
import type { Harness, HarnessName, HookAnswer, HookEvent } from '../types.js';
import { HARNESS_NAMES } from '../types.js';

// svc-hook <harness>: the command hook of a coding agent. It forwards the hook event on stdin
// to svc and turns svc's answer into the harness's stdout and exit status. It fails closed:
// whatever keeps a decision from arriving denies the call, naming the problem.

/** Below every harness's own hook timeout (Copilot's default of 30 s is the shortest). */
const DEFAULT_TIMEOUT_MS = 8000;
/** A hook event is a tool call's input: large file writes included, but bounded. */
const MAX_EVENT_BYTES = 8 << 20;

const USAGE = `Usage: svc-hook <harness> [options]

Forwards a coding agent's hook event (JSON on standard input) to svc and writes the
harness's answer to standard output, exiting with the status the harness expects.

Harnesses: ${HARNESS_NAMES.join(', ')}

Environment:
  SVC_URL              svc's base URL; the event is POSTed to SVC_URL${hookPath('<harness>')}
  SVC_API_KEY          the API key, sent as the X-API-Key header
  SVC_HOOK_TIMEOUT_MS  how long to wait for svc, in ms (default ${DEFAULT_TIMEOUT_MS})
  SVC_HOOK_FAIL_OPEN   "true" lets calls through when svc cannot decide (default: deny)
  SVC_REPOSITORY       the repository the session works in, as owner/name (default: read
                       from the origin remote of the git repository in the event's cwd)
  SVC_HOOK_WAIT        seconds (1-300) an escalated call that cannot be asked about waits
                       for a reviewer's decision before it is denied (sent as ?wait=);
                       svc-hook waits that much longer than its timeout

After a tool call (a post-tool event), svc-hook also sends the HEAD commit of the
repository in the event's working directory (git rev-parse HEAD, as ?git_head=), so
that svc can tie the commits of a pull request to the session that made them.

Options:
  --timeout <ms>       as SVC_HOOK_TIMEOUT_MS
  --fail-open          as SVC_HOOK_FAIL_OPEN=true
  --event <name>       the hook event the command is configured for (sent as ?event=)
  --policy <name>      evaluate under this policy instead of the key's (sent as ?policy=)
  --no-ask             nobody can answer an ask now (a headless run): an escalated call is
                       denied with the place where a reviewer approves it (sent as ?ask=false)
  --repository <name>  as SVC_REPOSITORY (sent as ?repository=)
  --wait <seconds>     as SVC_HOOK_WAIT
  -h, --help           this text
  --version            the version of svc-hook

svc answers with the harness's JSON body and the exit status in the ${EXIT_HEADER} header.
When svc cannot be reached, answers with an error, a malformed body or too late, the call
is denied with a message that names the problem, unless fail-open is set. An event after
a call or at a session's start or end gates nothing: it then exits 1 with the problem.
`;

interface Options {
  harness: HarnessName;
  timeoutMs: number;
  failOpen: boolean;
  event?: string;
  policy?: string;
  noAsk?: boolean;
  repository?: string;
  waitSeconds?: number;
}

/** `settingError`: a setting the operator got wrong, which must not let a call through. */
type Parsed =
  | { help: true }
  | { version: true }
  | { error: string }
  | { options: Options; settingError?: string };

function parseArgs(argv: string[], env: NodeJS.ProcessEnv): Parsed {
  let harnessName: string | undefined;
  let timeout = env['SVC_HOOK_TIMEOUT_MS'];
  let failOpen = env['SVC_HOOK_FAIL_OPEN'] === 'true';
  let event: string | undefined;
  let policy: string | undefined;
  let noAsk = false;
  let repository = env['SVC_REPOSITORY'] || undefined;
  let wait = env['SVC_HOOK_WAIT'] || undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const value = () => {
      const next = argv[++i];
      if (next === undefined) throw new Error(`${arg} needs a value`);
      return next;
    };
    try {
      if (arg === '-h' || arg === '--help') return { help: true };
      else if (arg === '--version') return { version: true };
      else if (arg === '--fail-open') failOpen = true;
      else if (arg === '--timeout') timeout = value();
      else if (arg === '--event') event = value();
      else if (arg === '--policy') policy = value();
      else if (arg === '--no-ask') noAsk = true;
      else if (arg === '--repository') repository = value();
      else if (arg === '--wait') wait = value();
      else if (arg.startsWith('-')) return { error: `unknown option ${arg}` };
      else if (harnessName === undefined) harnessName = arg;
      else return { error: `unexpected argument ${arg}` };
    } catch (error) {
      return { error: (error as Error).message };
    }
  }
  if (harnessName === undefined) return { error: 'name the harness' };
  if (!(HARNESS_NAMES as readonly string[]).includes(harnessName)) {
    return { error: `unknown harness "${harnessName}"` };
  }
  const options: Options = {
    harness: harnessName as HarnessName,
    timeoutMs: DEFAULT_TIMEOUT_MS,
    failOpen,
  };
  if (event !== undefined) options.event = event;
  if (policy !== undefined) options.policy = policy;
  if (noAsk) options.noAsk = true;
  if (repository !== undefined) {
    if (!isRepository(repository)) {
      const settingError = `the repository must be a path such as owner/name (at most ${MAX_REPOSITORY} characters), not "${repository}"`;
      return { options, settingError };
    }
    options.repository = repository;
  }
  if (wait !== undefined) {
    const seconds = Number(wait);
    if (!/^\d{1,3}$/.test(wait.trim()) || seconds < 1 || seconds > 300) {
      return { options, settingError: `the wait must be 1 to 300 seconds, not "${wait}"` };
    }
    options.waitSeconds = seconds;
  }
  if (timeout !== undefined) {
    const ms = Number(timeout);
    if (!/^\d+$/.test(timeout.trim()) || ms < 1 || ms > 600_000) {
      return { options, settingError: `the timeout must be 1 to 600000 ms, not "${timeout}"` };
    }
    options.timeoutMs = ms;
  }
  return { options };
}

function readStdin(): string | null {
  const data = readFileSync(0);
  return data.length > MAX_EVENT_BYTES ? null : data.toString('utf8');
}

function emit(answer: HookAnswer): void {
  if (answer.stderr) process.stderr.write(`${answer.stderr}\n`);
  process.stdout.write(`${JSON.stringify(answer.body)}\n`, () => process.exit(answer.exit_code));
}

async function decide(
  harness: Harness,
  options: Options,
  env: NodeJS.ProcessEnv,
  settingError: string | undefined,
): Promise<HookAnswer> {
  const fail = (problem: string) =>
    options.failOpen ? harness.failOpen(problem) : harness.failClosed(problem);
  let event: string | null;
  try {
    event = readStdin();
  } catch (error) {
    return fail(
      `the hook event could not be read from standard input: ${(error as Error).message}`,
    );
  }
  if (event === null) return fail(`the hook event is larger than ${MAX_EVENT_BYTES} bytes`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(event);
  } catch {
    return fail('the hook event on standard input is not JSON');
  }
  const read = harness.parseEvent(parsed, options.event ? { event: options.event } : {});
  // An event that cannot be read is still known by its name, when it has one: a post-tool
  // or session event svc-hook cannot read is reported as one. Any other stays a pre-tool
  // event, whose failure denies.
  const named = read.ok ? read.event.hook_event : (options.event ?? nameOf(parsed));
  const kind = read.ok ? read.event.kind : named !== undefined ? harness.kindOf(named) : null;
  const after = read.ok
    ? kind !== 'pre_tool'
    : kind === 'post_tool' || kind === 'session_start' || kind === 'session_end';
  // Only a pre-tool event gates a call. After the call, or at a session's start or end, there
  // is nothing left to deny: a failure is reported as a non-blocking error (exit 1), so that
  // the harness neither stops the agent nor reads a deny meant for another event.
  const failAfter = (problem: string): HookAnswer => ({
    ...harness.acknowledge(),
    exit_code: 1,
    stderr: `svc-hook: the ${named ?? 'event'} was not recorded: ${problem}`,
  });
  const failWith = after ? failAfter : fail;
  if (!read.ok && after) return failAfter(read.error);
  // A configured event svc does not read (a typo such as `pretooluse`) would be acknowledged
  // as one that asks nothing, every call of it let through: refused instead.
  if (options.event !== undefined && harness.kindOf(options.event) === 'other')
    return fail(`--event "${options.event}" is no event svc reads from ${harness.name}`);
  if (settingError) return failWith(settingError);
  const baseUrl = env['SVC_URL'];
  if (!baseUrl) return failWith('SVC_URL is not set');
  const apiKey = env['SVC_API_KEY'];
  if (!apiKey) return failWith('SVC_API_KEY is not set');
  const head = read.ok && kind === 'post_tool' ? await headAfterCall(read.event) : null;
  const repository =
    options.repository ??
    (read.ok && (kind === 'pre_tool' || kind === 'post_tool')
      ? originRepository(read.event.session.cwd)
      : null);
  const result = await forward(harness, event, {
    baseUrl,
    apiKey,
    // A waiting answer comes that much later.
    timeoutMs: options.timeoutMs + (options.waitSeconds ?? 0) * 1000,
    ...(options.event ? { event: options.event } : {}),
    ...(options.policy ? { policy: options.policy } : {}),
    ...(options.noAsk ? { noAsk: true } : {}),
    ...(head ? { gitHead: head } : {}),
    ...(repository ? { repository } : {}),
    ...(options.waitSeconds ? { waitSeconds: options.waitSeconds } : {}),
  });
  return result.ok ? result.answer : failWith(result.problem);
}

/** The event name a body carries, if any (`hook_event_name`, as every snake-case harness). */
function nameOf(body: unknown): string | undefined {
  const name =
    typeof body === 'object' && body !== null
      ? (body as Record<string, unknown>)['hook_event_name']
      : undefined;
  return typeof name === 'string' && name.length > 0 && name.length <= 64 ? name : undefined;
}

/**
 * After a tool call (a post-tool event), the HEAD of the repository the session works in (the
 * event's cwd), so that the call's outcome names the commit it left: svc ties the commits of a
 * pull request to the sessions that reported them. Every tool, not only git commands: a script
 * or an MCP tool may commit too. Null when there is no repository.
 */
async function headAfterCall(event: HookEvent): Promise<string | null> {
  // Loaded here, not at start: a pre-tool event, the one a harness waits on before each call,
  // then loads neither this module nor node:child_process.
  const { gitHead } = await import('./git-head.js');
  return gitHead(event.session.cwd);
}

async function main(): Promise<void> {
  const parsed = parseArgs(process.argv.slice(2), process.env);
  if ('help' in parsed) {
    process.stdout.write(USAGE);
    return;
  }
  if ('version' in parsed) {
    // The package's own manifest, two levels up from dist/cli/ (and from src/cli/).
    const manifest = new URL('../../package.json', import.meta.url);
    process.stdout.write(
      `${(JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version}\n`,
    );
    return;
  }
  if ('error' in parsed) {
    // Without a known harness there is no harness answer to give: exit 2, which blocks the
    // call in Claude Code, Codex, Gemini CLI and Cursor.
    process.stderr.write(`svc-hook: ${parsed.error}\n\n${USAGE}`);
    process.exit(2);
  }
  const { options, settingError } = parsed;
  const harness = await loadHarness(options.harness);
  emit(await decide(harness, options, process.env, settingError));
}

main().catch((error: unknown) => {
  // Unreachable by design; still, a crash must deny rather than let the call through.
  process.stderr.write(`svc-hook: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(2);
});

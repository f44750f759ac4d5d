import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runNode, type NodeRun } from '../../fixtures/run-node.js';
import { childEnvBase } from '../../support/child-env.js';

export const BUNDLE = fileURLToPath(new URL('../../../action/dist/index.js', import.meta.url));
export const REPOSITORY = 'acme/web';
export const HEAD_SHA = '9f8e7d6c5b4a39281706f5e4d3c2b1a098765432';

export interface ActionRun extends NodeRun {
  outputs: Record<string, string>;
  summary: string;
  workspace: string;
  /** The file receipt-path names, read before the workspace is removed. */
  receiptText: string | null;
  /** The file attestation-path names, likewise. */
  attestationText: string | null;
  /** Every ::error:: / ::warning:: line the runner would turn into an annotation. */
  errors: string[];
  warnings: string[];
}

/** A pull_request event payload as GITHUB_EVENT_PATH holds it. */
export const pullRequestEvent = (number = 42) => ({
  action: 'synchronize',
  number,
  pull_request: {
    number,
    title: 'Fix session timeout',
    head: { sha: HEAD_SHA, ref: 'fix/session-timeout' },
    base: { ref: 'main' },
  },
  repository: { full_name: REPOSITORY, name: 'web', owner: { login: 'acme' } },
});

// GITHUB_OUTPUT holds `name<<delimiter`, the value, then the delimiter, per output.
function readOutputs(path: string): Record<string, string> {
  const text = readFileSync(path, 'utf8');
  const outputs: Record<string, string> = {};
  const pattern = /^([^\n<]+)<<(\S+)\n([\s\S]*?)\n\2$/gm;
  for (const m of text.matchAll(pattern)) outputs[m[1]!] = m[3]!;
  return outputs;
}

/**
 * Runs the bundled Action in a child process the way a runner does: each input as
 * INPUT_<NAME upper-cased, dashes kept>, file commands in GITHUB_OUTPUT and
 * GITHUB_STEP_SUMMARY, the event payload at GITHUB_EVENT_PATH. Nothing else of this
 * process's environment leaks in.
 */
export async function runAction(
  inputs: Record<string, string>,
  options: { env?: Record<string, string>; event?: object; files?: Record<string, string> } = {},
): Promise<ActionRun> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-action-'));
  try {
    const workspace = join(dir, 'workspace');
    mkdirSync(workspace);
    for (const [name, content] of Object.entries(options.files ?? {})) {
      mkdirSync(dirname(join(workspace, name)), { recursive: true });
      writeFileSync(join(workspace, name), content);
    }
    const paths = {
      output: join(dir, 'output'),
      summary: join(dir, 'summary.md'),
      event: join(dir, 'event.json'),
    };
    writeFileSync(paths.output, '');
    writeFileSync(paths.summary, '');
    writeFileSync(paths.event, JSON.stringify(options.event ?? pullRequestEvent()));
    const env: NodeJS.ProcessEnv = {
      ...childEnvBase(),
      GITHUB_ACTIONS: 'true',
      GITHUB_OUTPUT: paths.output,
      GITHUB_STEP_SUMMARY: paths.summary,
      GITHUB_EVENT_PATH: paths.event,
      GITHUB_EVENT_NAME: 'pull_request',
      GITHUB_REPOSITORY: REPOSITORY,
      GITHUB_RUN_ID: '7001',
      GITHUB_RUN_ATTEMPT: '1',
      GITHUB_RUN_NUMBER: '12',
      GITHUB_SHA: '0123456789abcdef0123456789abcdef01234567',
      GITHUB_REF: 'refs/pull/42/merge',
      GITHUB_ACTOR: 'coder-bot',
      GITHUB_WORKFLOW: 'svc gate',
      GITHUB_JOB: 'gate',
      GITHUB_ACTION: '__svc',
      GITHUB_SERVER_URL: 'https://github.com',
      GITHUB_API_URL: 'https://api.github.com',
      GITHUB_WORKSPACE: workspace,
      RUNNER_TEMP: dir,
      ...options.env,
    };
    for (const [name, value] of Object.entries(inputs))
      env[`INPUT_${name.replace(/ /g, '_').toUpperCase()}`] = value;
    const run = await runNode(BUNDLE, [], 30_000, env);
    const lines = run.stdout.split('\n');
    const outputs = readOutputs(paths.output);
    const receiptPath = outputs['receipt-path'];
    return {
      ...run,
      outputs,
      receiptText: receiptPath ? readFileSync(receiptPath, 'utf8') : null,
      attestationText: outputs['attestation-path']
        ? readFileSync(outputs['attestation-path'], 'utf8')
        : null,
      summary: readFileSync(paths.summary, 'utf8'),
      workspace,
      errors: lines.filter((l) => l.startsWith('::error::')).map((l) => l.slice(9)),
      warnings: lines.filter((l) => l.startsWith('::warning::')).map((l) => l.slice(11)),
    };
  } finally {
    // Receipts written to the workspace are read by the caller before this returns.
    rmSync(dir, { recursive: true, force: true });
  }
}

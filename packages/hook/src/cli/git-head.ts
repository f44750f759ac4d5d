import { execFile } from 'node:child_process';

/** A commit id as svc takes it: SHA-1 or SHA-256, lower-case hex. */
const COMMIT = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

/** Reading HEAD takes milliseconds; a hung git must not hold the harness. */
const GIT_TIMEOUT_MS = 2000;

/**
 * The HEAD commit of the git repository at `cwd`, or null when there is none (not a
 * repository, no commit yet, git missing or too slow). svc ties a commit to the session whose
 * outcome reported it (docs/AGENTS.md, "Commits and sessions"); reporting nothing only leaves
 * a commit untied, which fails the `agent_session` rule closed, so no error here denies a call.
 */
export function gitHead(cwd: string | undefined): Promise<string | null> {
  return new Promise((resolve) => {
    execFile(
      'git',
      ['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'],
      {
        ...(cwd ? { cwd } : {}),
        timeout: GIT_TIMEOUT_MS,
        windowsHide: true,
        maxBuffer: 4096,
        // Never prompt, never take an optional lock the agent's own git commands may want.
        env: { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_OPTIONAL_LOCKS: '0' },
      },
      (error, stdout) => {
        const head = String(stdout).trim();
        resolve(!error && COMMIT.test(head) ? head : null);
      },
    );
  });
}

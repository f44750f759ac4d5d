#!/usr/bin/env node
// The svc-hook command runs the built CLI. This file exists before any build, so that npm
// links the command when it installs the workspace (npm ci); `npm run build` (or
// `npm run build:hook`) in the repository, and `npm pack` / `npm publish`, build the CLI.
// Not built is a failure the harness must see as a denial, not as a hook that ran: exit 2
// blocks the tool call in Claude Code, Codex, Gemini CLI and Cursor.
import('../dist/cli/svc-hook.js').catch((error) => {
  if (error?.code === 'ERR_MODULE_NOT_FOUND' && String(error.message).includes('svc-hook.js')) {
    process.stderr.write('svc-hook: not built: run "npm run build:hook" in the repository\n');
    process.exit(2);
  }
  throw error;
});

#!/usr/bin/env node
// The svc-verify command runs the built CLI. This file exists before any build, so that npm
// links the command when it installs the workspace (npm ci); `npm run build` (or
// `npm run build:verify`) in the repository, and `npm pack` / `npm publish`, build the CLI.
import('../dist/cli/svc-verify.js').catch((error) => {
  if (error?.code === 'ERR_MODULE_NOT_FOUND' && String(error.message).includes('svc-verify.js')) {
    process.stderr.write('svc-verify: not built: run "npm run build:verify" in the repository\n');
    process.exit(2);
  }
  throw error;
});

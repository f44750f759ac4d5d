// Bundles the Action into the one file action.yml runs: action/dist/index.js.
// `node scripts/build-action.mjs [outfile]`; the freshness test builds to a temp file and
// compares, so the build must be byte-for-byte reproducible (no timestamps, paths relative
// to the repository root).
import { build } from 'esbuild';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
// The project's Node version, one place for all: .node-version (major.minor).
const nodeVersion = readFileSync(new URL('../.node-version', import.meta.url), 'utf8').trim();
const outfile = process.argv[2] ?? 'action/dist/index.js';

await build({
  absWorkingDir: root,
  entryPoints: ['action/src/index.ts'],
  // @svc/verify resolves through tsconfig.json's paths to packages/verify/src: the bundle is
  // made from the package's source, with no build of the package first.
  outfile,
  bundle: true,
  platform: 'node',
  // node24 on runners, the project's Node (.node-version) here: what runs on the older runs
  // on both.
  target: `node${nodeVersion}`,
  // ESM, because the repository's package.json says "type": "module", so Node reads every
  // .js below it as ESM; bundled CommonJS dependencies get a require() from createRequire.
  format: 'esm',
  banner: {
    js: "import { createRequire as __svcCreateRequire } from 'node:module'; const require = __svcCreateRequire(import.meta.url);",
  },
  legalComments: 'none',
  // Paths as the importer sees them, not resolved through symlinks: a checkout whose
  // node_modules is a symlink bundles the same bytes as a clean clone.
  preserveSymlinks: true,
  logLevel: 'warning',
});

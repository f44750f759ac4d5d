// Bundles the explorer's browser script (src/explorer/client/main.ts) into the one file the
// service serves at /explorer/assets/explorer.js: `node scripts/build-explorer.mjs [outfile]`
// (default dist/explorer/explorer.js, where `npm run build` puts it).
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const outfile = process.argv[2] ?? 'dist/explorer/explorer.js';

await build({
  absWorkingDir: root,
  entryPoints: ['src/explorer/client/main.ts'],
  outfile,
  bundle: true,
  platform: 'browser',
  format: 'esm',
  target: 'es2022',
  minify: true,
  legalComments: 'none',
  logLevel: 'warning',
});

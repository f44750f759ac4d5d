// Compiles the service's TypeScript into dist/ for Node, file by file: esbuild removes the
// types and writes each module as the ESM it is, with its source map, where tsc would put it
// (src/app.ts → dist/src/app.js). The files and options are tsconfig.build.json's, read by
// TypeScript itself. Types are checked by `npm run typecheck` (part of `npm test`), not here:
// this takes about a second where tsc's emit took about twenty. tsconfig.json's
// "isolatedModules" and "verbatimModuleSyntax" keep every file compilable on its own, so the
// output is what tsc emits for the same options.
//   node scripts/compile.mjs           what tsconfig.build.json includes (src/)
//   node scripts/compile.mjs bench     the directories named instead (the benchmark harness)
import { build } from 'esbuild';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = fileURLToPath(new URL('..', import.meta.url));
const TSCONFIG = 'tsconfig.build.json';

const args = process.argv.slice(2);
if (args.some((a) => a.startsWith('-'))) {
  const help = args.includes('--help') || args.includes('-h');
  (help ? process.stdout : process.stderr).write(
    'usage: node scripts/compile.mjs [directory ...]\n' +
      '  Compiles what tsconfig.build.json includes, or the directories named, into dist/.\n',
  );
  process.exit(help ? 0 : 2);
}

const path = ts.findConfigFile(root, ts.sys.fileExists, TSCONFIG);
const { config, error } = ts.readConfigFile(path, ts.sys.readFile);
if (error) throw new Error(ts.flattenDiagnosticMessageText(error.messageText, '\n'));
const parsed = ts.parseJsonConfigFileContent(
  args.length > 0 ? { ...config, include: args } : config,
  ts.sys,
  root,
);
if (parsed.errors.length > 0) {
  for (const e of parsed.errors)
    process.stderr.write(`compile: ${ts.flattenDiagnosticMessageText(e.messageText, '\n')}\n`);
  process.exit(2);
}
const entryPoints = parsed.fileNames
  .filter((file) => !file.endsWith('.d.ts'))
  .map((file) => relative(root, file));

await build({
  absWorkingDir: root,
  entryPoints,
  outdir: parsed.options.outDir ? relative(root, parsed.options.outDir) : 'dist',
  outbase: parsed.options.rootDir ? relative(root, parsed.options.rootDir) || '.' : '.',
  bundle: false,
  platform: 'node',
  format: 'esm',
  target: ts.ScriptTarget[parsed.options.target ?? ts.ScriptTarget.ES2023].toLowerCase(),
  sourcemap: parsed.options.sourceMap ?? false,
  tsconfig: TSCONFIG,
  logLevel: 'warning',
});

// Jest's transform of the TypeScript sources: types stripped by esbuild, one file at a time,
// to ES modules. Nothing is type-checked here: `npm run typecheck` (tsc --noEmit, first in
// `npm test`) does that for the whole program. tsconfig.json's isolatedModules and
// verbatimModuleSyntax already make every file compilable on its own, so this is the same
// output ts-jest's per-file transpile gave, made about six times faster (the transform of a
// fresh clone's ~500 files was a good part of every file's start-up).
const { createHash } = require('node:crypto');
const { readFileSync } = require('node:fs');
const esbuild = require('esbuild');

// tsconfig.json's options that change the emitted code.
const TSCONFIG = {
  compilerOptions: {
    target: 'ES2023',
    verbatimModuleSyntax: true,
    useDefineForClassFields: true,
  },
};

const SELF = createHash('sha256')
  .update(readFileSync(__filename))
  .update(esbuild.version)
  .digest('hex');

module.exports = {
  process(sourceText, sourcePath) {
    const { code, map } = esbuild.transformSync(sourceText, {
      loader: 'ts',
      format: 'esm',
      target: 'es2023',
      // Import attributes (`with { type: 'json' }`) kept: Node 22 and 24 read them, and Jest
      // warns of a JSON import without one.
      supported: { 'import-attributes': true },
      sourcemap: 'external',
      sourcefile: sourcePath,
      tsconfigRaw: TSCONFIG,
    });
    return { code, map };
  },
  getCacheKey(sourceText, sourcePath, options) {
    return createHash('sha256')
      .update(SELF)
      .update('\0')
      .update(sourcePath)
      .update('\0')
      .update(sourceText)
      .update('\0')
      .update(String(options.supportsStaticESM))
      .digest('hex');
  },
};

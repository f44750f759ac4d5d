import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import { builtinModules } from 'node:module';

// The dependency direction of docs/ARCHITECTURE.md, held by the linter as one table: each
// folder with the folders of src/ it may import (`may`; every other one is forbidden), the
// packages or paths it must not import (`not`), and folders it may import types from only
// (`types`). A more specific folder is its own row and the rows above it leave it out, so no
// file gets two rows: ESLint's later no-restricted-imports would replace the earlier one.
// test/unit/lint/layer-rules.test.ts feeds the linter one forbidden import per pair.
const byPackageName = {
  group: ['**/packages/verify/**', '**/packages/verify'],
  message: 'Import the verifier by its package name, @svc/verify (docs/ARCHITECTURE.md).',
};
const mongoStore = {
  group: ['mongodb', 'agenda', '@agendajs/*', '**/storage/mongo/**'],
  message: 'Import the MongoDB store only through createStore (storage/create-store.ts).',
};
const sqliteStore = {
  group: ['better-sqlite3', '**/storage/sqlite/**'],
  message: 'Import the SQLite store only through createStore (storage/create-store.ts).',
};
// Each store backend is imported dynamically by storage/create-store.ts, and only when chosen:
// the embedded mode never loads the MongoDB driver or agenda, nor the MongoDB mode
// better-sqlite3. A static import anywhere else would load a backend in both modes.
const stores = [mongoStore, sqliteStore];
const transports = {
  group: ['express', 'probot', 'pino-http', '@octokit/*', 'helmet', 'cors'],
  message: 'Only the transports (api/, github/, explorer/) and the composition root know HTTP.',
};
const io = {
  group: [
    'express',
    'better-sqlite3',
    'mongodb',
    'pino',
    'pino-http',
    'node:fs',
    'node:http',
    'fs',
    'probot',
    '@octokit/*',
    'agenda',
  ],
  message: 'The core does no I/O.',
};
const nodeBuiltins = { group: ['node:*', ...builtinModules], message: 'Portable code: no Node.' };
const serviceCode = {
  group: [
    '**/src/**',
    '**/action/**',
    'zod',
    'express',
    'better-sqlite3',
    'mongodb',
    'pino',
    'probot',
    'agenda',
    '@octokit/*',
    '@actions/*',
  ],
  message: '@svc/verify is published alone: it imports only itself and its declared dependencies.',
};
const selfByName = {
  group: ['@svc/verify', '@svc/verify/*'],
  message: 'Inside @svc/verify, import its modules relatively.',
};

// packages/hook is published alone and depends on nothing but Node: no package of the service,
// no other workspace, no schema library.
const hookDependencies = {
  group: ['@svc/*', '@noble/*', 'safe-stable-stringify', 'yaml', 'picomatch', 'ulid'],
  message: '@svc/hook has no dependencies: it imports its own modules and Node only.',
};

/** The folders of src/ (and its top-level files) that the `may` lists name. */
export const SRC_FOLDERS = [
  'config',
  'core',
  'ports',
  'services',
  'storage',
  'jobs',
  'github',
  'api',
  'explorer',
  'cluster',
  'secrets',
  'cli',
  'runtime',
  'mcp',
];
const COMPOSITION = ['app.js', 'server.js', 'logger.js'];

/**
 * The layer table. `files` defaults to every .ts file below `folder`; `may: null` means the
 * row restricts packages only (outside src/, or a composition root).
 */
export const LAYERS = [
  { folder: 'src/config', may: [], not: [] },
  { folder: 'src/core', may: [], not: [io, nodeBuiltins] },
  { folder: 'src/ports', may: ['core'], not: [io] },
  { folder: 'src/services', may: ['core', 'ports'], not: [transports] },
  { folder: 'src/secrets', may: ['core', 'ports'], not: [transports] },
  { folder: 'src/cluster', may: ['core', 'ports'], not: [transports] },
  // The ledger runtime opens the store and builds the services, job handlers and the GitHub
  // App's delivery handler once; HTTP is built over it (app.ts) and knows it, not the reverse.
  {
    folder: 'src/runtime',
    may: ['config', 'core', 'ports', 'services', 'storage', 'secrets', 'jobs', 'github'],
    not: [
      {
        group: ['express', 'pino-http', 'helmet', 'cors'],
        message: 'The runtime knows no HTTP: app.ts builds the routes over it.',
      },
    ],
  },
  // Adapters implement ports; the job queues are adapters too, so nothing under storage/
  // reaches up to the job handlers or a transport.
  {
    folder: 'src/storage',
    files: ['src/storage/*.ts'],
    may: ['config', 'core', 'ports'],
    not: [...stores, transports],
  },
  { folder: 'src/storage/sqlite', may: ['config', 'core', 'ports'], not: [mongoStore, transports] },
  { folder: 'src/storage/mongo', may: ['config', 'core', 'ports'], not: [sqliteStore, transports] },
  { folder: 'src/jobs', may: ['core', 'ports', 'services'], not: [transports] },
  // The GitHub App reaches the store through services and ports only.
  { folder: 'src/github', may: ['core', 'ports', 'services'], not: [] },
  { folder: 'src/api', may: ['core', 'ports', 'services'], not: [] },
  // svc's MCP server: tools over the API's routes and schemas (in-service) or its REST API (stdio).
  { folder: 'src/mcp', may: ['api', 'core', 'ports', 'services'], not: [] },
  { folder: 'src/explorer', may: ['api', 'core', 'ports', 'services'], not: [] },
  // The explorer's browser bundle: the pure core, the page renderers and the DOM; nothing that
  // needs Node, a store or Express (types excepted, which the bundle drops).
  {
    folder: 'src/explorer/client',
    may: ['core', 'explorer'],
    types: ['api', 'services'],
    not: [
      io,
      nodeBuiltins,
      {
        group: ['**/router.js', '**/loaders.js'],
        message: 'The browser bundle imports the core and the page renderers only.',
      },
    ],
  },
  {
    folder: 'src/cli',
    may: ['api', 'config', 'core', 'github', 'mcp', 'ports', 'secrets', 'services', 'storage'],
    not: [],
  },
  // The composition root and the process entry wire everything, stores through createStore.
  { folder: 'src', files: ['src/*.ts'], may: null, not: [] },
  // The Action uses the verifier only (and @actions/*): nothing that opens a store or
  // listens, so it starts fast and runs where the service is not.
  {
    folder: 'action/src',
    may: null,
    not: [
      {
        group: ['**/src/**', 'express', 'better-sqlite3', 'pino', 'zod'],
        message: 'The Action imports @svc/verify, not the service (docs/ARCHITECTURE.md).',
      },
    ],
  },
  // packages/verify is published alone: it imports its own modules and its declared
  // dependencies, nothing of the service (src/) or the Action ...
  { folder: 'packages/verify/src/cli', may: null, not: [serviceCode, selfByName] },
  { folder: 'packages/verify/src/node', may: null, not: [serviceCode, selfByName] },
  // ... and outside the CLI and the Node helpers it is portable: a browser bundle imports it.
  {
    folder: 'packages/verify/src',
    may: null,
    not: [
      serviceCode,
      selfByName,
      {
        group: ['node:*', ...builtinModules],
        message:
          'Only src/cli and src/node of @svc/verify may use Node: the rest runs in browsers.',
      },
    ],
  },
  { folder: 'packages/hook/src', may: null, not: [serviceCode, hookDependencies] },
];

/** One config block per row of LAYERS. */
function layerBlocks() {
  return LAYERS.map((row) => {
    const files = row.files ?? [`${row.folder}/**/*.ts`];
    // Rows for folders below this one take their files themselves.
    const ignores = LAYERS.filter(
      (other) => other !== row && other.folder.startsWith(`${row.folder}/`) && !row.files,
    ).map((other) => `${other.folder}/**`);
    const patterns = [byPackageName, ...row.not];
    const inService = row.folder === 'src' || row.folder.startsWith('src/');
    if (inService && !row.folder.startsWith('src/storage')) {
      patterns.push(...stores);
    }
    if (row.may) {
      const own = row.folder.split('/')[1];
      const others = SRC_FOLDERS.filter(
        (f) => f !== own && !row.may.includes(f) && !(row.types ?? []).includes(f),
      );
      patterns.push({
        group: [...others.map((f) => `**/${f}/**`), ...COMPOSITION.map((f) => `**/${f}`)],
        message: `${row.folder} may import ${row.may.length ? row.may.join(', ') : 'no other folder of src/'} (docs/ARCHITECTURE.md).`,
      });
      if (row.types?.length) {
        patterns.push({
          group: row.types.map((f) => `**/${f}/**`),
          allowTypeImports: true,
          message: `${row.folder} imports only types from ${row.types.join(', ')}.`,
        });
      }
    }
    return {
      files,
      ...(ignores.length ? { ignores } : {}),
      rules: { 'no-restricted-imports': ['error', { patterns }] },
    };
  });
}

export default tseslint.config(
  {
    ignores: [
      'dist/',
      'packages/*/dist/',
      'node_modules/',
      'coverage/',
      'data/',
      'action/dist/',
      'bench/results/',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  prettier,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      'no-console': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
  ...layerBlocks(),
  {
    // The explorer's browser bundle runs in browsers.
    files: ['src/explorer/client/**/*.ts'],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    // Domain time (receipts, check runs, webhook and health records) comes from the injected
    // Clock, so tests set it; the process entries and the CLI may read the machine's.
    files: ['src/**/*.ts'],
    ignores: ['src/server.ts', 'src/app.ts', 'src/cli/**', 'src/ports/clock.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "NewExpression[callee.name='Date'][arguments.length=0]",
          message: 'Take the time from the injected Clock (ports/clock.ts).',
        },
        {
          selector: "CallExpression[callee.object.name='Date'][callee.property.name='now']",
          message: 'Take the time from the injected Clock (ports/clock.ts).',
        },
      ],
    },
  },
  {
    files: [
      'src/cli/**/*.ts',
      'packages/verify/src/cli/**/*.ts',
      'bench/**/*.ts',
      'scripts/**/*.ts',
    ],
    rules: { 'no-console': 'off' },
  },
  {
    files: ['test/**/*.ts', '*.cjs', 'test/**/*.cjs'],
    languageOptions: { globals: { ...globals.node, ...globals.jest } },
    rules: {
      '@typescript-eslint/no-require-imports': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
);

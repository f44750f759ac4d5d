import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import { builtinModules } from 'node:module';

// The dependency direction of docs/ARCHITECTURE.md, held by the linter: the core knows no
// transport, store or process; ports know only the core; services know no transport.
// Across package lines only package names: the service and the Action import the verifier as
// @svc/verify, never a path into packages/verify; the package imports nothing of theirs.
// Every block below restricts with `forbidden`, which always adds this line, because a later
// block's no-restricted-imports replaces an earlier one's for the files both match.
const byPackageName = {
  group: ['**/packages/verify/**', '**/packages/verify'],
  message: 'Import the verifier by its package name, @svc/verify (docs/ARCHITECTURE.md).',
};
const forbidden = (groups) => ['error', { patterns: [byPackageName, ...groups] }];
const mongoStore = {
  group: ['mongodb', 'agenda', '@agendajs/*', '**/storage/mongo/**'],
  message: 'Import the MongoDB store only through createStore (storage/create-store.ts).',
};
const sqliteStore = {
  group: ['better-sqlite3', '**/storage/sqlite/**'],
  message: 'Import the SQLite store only through createStore (storage/create-store.ts).',
};
const storageUp = {
  group: ['**/jobs/**', '**/api/**', '**/services/**', '**/github/**', '**/cli/**'],
  message: 'Storage adapters import the core, ports and config only.',
};
const outward = {
  group: [
    '**/api/**',
    '**/storage/**',
    '**/services/**',
    '**/secrets/**',
    '**/app.js',
    '**/server.js',
  ],
  message: 'Dependencies point inward (docs/ARCHITECTURE.md).',
};
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
  {
    // Each store backend is imported dynamically by storage/create-store.ts, and only when
    // chosen: the embedded mode never loads the MongoDB driver or agenda, nor the MongoDB mode
    // better-sqlite3. A static import anywhere else would load a backend in both modes. This
    // block holds the SQLite adapter to it, the next one everything outside both adapters
    // (and the directory rules further down, which replace it, forbid stores outright).
    files: ['src/**/*.ts'],
    ignores: ['src/storage/mongo/**'],
    rules: {
      'no-restricted-imports': forbidden([mongoStore]),
    },
  },
  {
    files: ['src/**/*.ts'],
    ignores: ['src/storage/mongo/**', 'src/storage/sqlite/**'],
    rules: {
      'no-restricted-imports': forbidden([mongoStore, sqliteStore]),
    },
  },
  {
    files: ['src/core/**/*.ts'],
    rules: {
      'no-restricted-imports': forbidden([
        outward,
        io,
        { group: ['**/ports/**', 'node:*'], message: 'The core is portable and pure.' },
      ]),
    },
  },
  {
    files: ['src/ports/**/*.ts'],
    rules: { 'no-restricted-imports': forbidden([outward, io]) },
  },
  {
    // Adapters implement ports; the job queues are adapters too (storage/sqlite, storage/mongo),
    // so nothing under storage reaches up to the job handlers or a transport. These blocks
    // replace the ones above for storage/, so each repeats what of them applies.
    files: ['src/storage/mongo/**/*.ts'],
    rules: { 'no-restricted-imports': forbidden([storageUp]) },
  },
  {
    files: ['src/storage/sqlite/**/*.ts'],
    rules: { 'no-restricted-imports': forbidden([storageUp, mongoStore]) },
  },
  {
    files: ['src/storage/*.ts'],
    rules: { 'no-restricted-imports': forbidden([storageUp, mongoStore, sqliteStore]) },
  },
  {
    files: ['src/github/**/*.ts'],
    rules: {
      'no-restricted-imports': forbidden([
        {
          group: ['**/api/**', '**/storage/**', '**/app.js', '**/server.js'],
          message: 'The GitHub App reaches the store through services and ports only.',
        },
      ]),
    },
  },
  {
    files: ['src/services/**/*.ts'],
    rules: {
      'no-restricted-imports': forbidden([
        {
          group: ['**/api/**', '**/storage/**', '**/app.js', '**/server.js', 'express'],
          message: 'Services know no transport or adapter.',
        },
      ]),
    },
  },
  {
    // The Action uses the verifier only (and @actions/*): nothing that opens a store or
    // listens, so it starts fast and runs where the service is not.
    files: ['action/src/**/*.ts'],
    rules: {
      'no-restricted-imports': forbidden([
        {
          group: ['**/src/**', 'express', 'better-sqlite3', 'pino', 'zod'],
          message: 'The Action imports @svc/verify, not the service (docs/ARCHITECTURE.md).',
        },
      ]),
    },
  },
  {
    // The explorer's browser bundle: the pure core, the page renderers and the DOM; nothing that
    // needs Node, a store or Express (types excepted, which the bundle drops).
    files: ['src/explorer/client/**/*.ts'],
    languageOptions: { globals: { ...globals.browser } },
    rules: {
      'no-restricted-imports': forbidden([
        {
          group: [
            ...io.group,
            'node:*',
            '**/storage/**',
            '**/secrets/**',
            '**/app.js',
            '**/router.js',
            '**/loaders.js',
          ],
          message: 'The browser bundle imports the core and the page renderers only.',
        },
        { group: ['**/api/**', '**/services/**'], allowTypeImports: true, message: 'Types only.' },
      ]),
    },
  },
  {
    // packages/verify is published alone: it imports its own modules and its declared
    // dependencies, nothing of the service (src/) or the Action.
    files: ['packages/verify/src/cli/**/*.ts', 'packages/verify/src/node/**/*.ts'],
    rules: { 'no-restricted-imports': forbidden([serviceCode, selfByName]) },
  },
  {
    // ... and outside the CLI and the Node helpers it is portable: a browser bundle imports it.
    files: ['packages/verify/src/**/*.ts'],
    ignores: ['packages/verify/src/cli/**', 'packages/verify/src/node/**'],
    rules: {
      'no-restricted-imports': forbidden([
        serviceCode,
        selfByName,
        {
          group: ['node:*', ...builtinModules],
          message:
            'Only src/cli and src/node of @svc/verify may use Node: the rest runs in browsers.',
        },
      ]),
    },
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

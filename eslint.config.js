import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';
import globals from 'globals';

// The dependency direction of docs/ARCHITECTURE.md, held by the linter: the core knows no
// transport, store or process; ports know only the core; services know no transport.
const forbidden = (groups) => ['error', { patterns: groups }];
const mongoStore = {
  group: ['mongodb', 'agenda', '@agendajs/*', '**/storage/mongo/**', '**/agenda-job-queue.js'],
  message: 'Import the MongoDB store only through createStore (storage/create-store.ts).',
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
  { ignores: ['dist/', 'node_modules/', 'coverage/', 'data/', 'action/dist/', 'bench/results/'] },
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
    ignores: ['src/storage/mongo/**', 'src/jobs/agenda-job-queue.ts'],
    rules: {
      'no-restricted-imports': forbidden([mongoStore]),
    },
  },
  {
    files: ['src/**/*.ts'],
    ignores: [
      'src/storage/mongo/**',
      'src/jobs/agenda-job-queue.ts',
      'src/storage/sqlite/**',
      'src/jobs/sqlite-job-queue.ts',
    ],
    rules: {
      'no-restricted-imports': forbidden([
        mongoStore,
        {
          group: ['better-sqlite3', '**/storage/sqlite/**', '**/sqlite-job-queue.js'],
          message: 'Import the SQLite store only through createStore (storage/create-store.ts).',
        },
      ]),
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
    // The Action and svc-verify use the pure core only: nothing that opens a store or listens,
    // so they start fast and run where the service is not.
    files: ['action/src/**/*.ts', 'src/cli/svc-verify.ts'],
    rules: {
      'no-restricted-imports': forbidden([
        {
          group: [
            ...outward.group,
            '**/ports/**',
            '**/config/**',
            '**/cli/**',
            '**/logger.js',
            'express',
            'better-sqlite3',
            'pino',
          ],
          message: 'The Action and svc-verify import src/core only.',
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
    files: ['src/cli/**/*.ts', 'bench/**/*.ts', 'scripts/**/*.ts'],
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

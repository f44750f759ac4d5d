import { tmpdir } from 'node:os';
import { join } from 'node:path';

// MONGODB_URI selects the store of every svc process: the tests that start svc or its CLI on
// a data directory (with the test's environment) must not inherit it. The MongoDB contract
// suites read it as SVC_TEST_MONGODB_URI instead. Done here, in Jest's parent process, so
// no worker and no child process sees MONGODB_URI.
if (process.env.MONGODB_URI) {
  process.env.SVC_TEST_MONGODB_URI ??= process.env.MONGODB_URI;
  delete process.env.MONGODB_URI;
}

// The tests start Node child processes by the hundred (the CLIs, the service), each compiling
// the same modules again. Node's compile cache keeps V8's code for them on disk between starts
// (a CLI's start-up takes about a fifth less); it is keyed by each file's content, so a stale
// entry is never used. Children given an environment of their own are passed it by
// test/support/child-env.ts.
process.env.NODE_COMPILE_CACHE ??= join(tmpdir(), 'svc-test-compile-cache');

/** @type {import('jest').Config} */
export default {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  extensionsToTreatAsEsm: ['.ts'],
  // @svc/verify and @svc/hook (packages/) are run from their source, as tsconfig.json's paths
  // type them.
  moduleNameMapper: {
    '^@svc/verify$': '<rootDir>/packages/verify/src/index.ts',
    '^@svc/verify/node$': '<rootDir>/packages/verify/src/node/index.ts',
    '^@svc/hook$': '<rootDir>/packages/hook/src/index.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  transform: { '^.+\\.ts$': '<rootDir>/test/support/ts-transform.cjs' },
  reporters: ['default', '<rootDir>/test/support/summary-reporter.cjs'],
  testTimeout: 30000,
  // Three files at a time, also on a two-core machine (where Jest's default is one worker): a
  // file spends much of its time waiting on child processes, sockets, timers and disk, and a
  // third file uses that time. Measured on 2 cores, one run after the other: 302 s with two
  // workers (1.75 cores busy on average), 254 s with three (1.86). Files that build into and
  // run from the repository's dist/ take test/support/build-lock.ts's lock.
  maxWorkers: 3,
  // ESM test files under --experimental-vm-modules keep their module graphs alive, so one
  // process that runs every file grows past V8's heap limit. A worker whose idle heap is
  // over this limit is replaced between files.
  workerIdleMemoryLimit: '1GB',
};

import { expect } from '@jest/globals';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runProgram, type NodeRun } from '../fixtures/run-node.js';
import { withRepositoryBuild } from './build-lock.js';

// A package of this repository as a user installs it: `npm pack` of its directory (whose
// prepack builds it, as `npm publish` would), installed into an empty directory with
// `npm install --offline`. Its dependencies are packed from this checkout's node_modules, so
// the install needs no registry.

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Runs a command (npm) in `cwd` and collects what it printed. */
export const runIn = (
  command: string,
  args: string[],
  cwd: string,
  timeoutMs = 120_000,
): Promise<NodeRun> => runProgram(command, args, { cwd, timeoutMs });

/**
 * That a package holds its build, its `bin/<command>.js`, README.md, LICENSE and
 * package.json, and no source: `files` as `npm pack` lists them.
 */
export function expectPackageFiles(
  files: { path: string }[],
  command: string,
  built: readonly string[],
): void {
  const paths = files.map((f) => f.path);
  expect(paths).toEqual(
    expect.arrayContaining(['README.md', 'LICENSE', 'package.json', `bin/${command}.js`, ...built]),
  );
  const allowed = new RegExp(
    `^(dist/.*\\.(js|d\\.ts)|bin/${command}\\.js|README\\.md|LICENSE|package\\.json)$`,
  );
  expect(paths.filter((p) => !allowed.test(p))).toEqual([]);
}

export interface PackedInstall {
  /** `npm pack --json`'s record of the package: its files, among others. */
  packed: { files: { path: string }[] } & Record<string, unknown>;
  /** The directory it is installed in (`node_modules/` below it). */
  installed: string;
  /** What `npm install` printed. */
  install: NodeRun;
}

/**
 * Packs `packageDir` (relative to the repository) and the named dependencies, and installs the
 * tarballs alone into `<dir>/<name>`.
 */
export async function packAndInstall(options: {
  packageDir: string;
  dependencies?: readonly string[];
  dir: string;
  name: string;
}): Promise<PackedInstall> {
  const tarballs = join(options.dir, 'tarballs');
  mkdirSync(tarballs);
  const pack = await withRepositoryBuild(() =>
    runIn(
      'npm',
      ['pack', '--json', '--pack-destination', tarballs],
      join(ROOT, options.packageDir),
    ),
  );
  if (pack.code !== 0) throw new Error(`npm pack failed: ${pack.stderr}`);
  const packed = (JSON.parse(pack.stdout) as PackedInstall['packed'][])[0]!;
  for (const dependency of options.dependencies ?? []) {
    const dependencyPack = await runIn(
      'npm',
      [
        'pack',
        '--ignore-scripts',
        '--pack-destination',
        tarballs,
        join(ROOT, 'node_modules', dependency),
      ],
      options.dir,
    );
    if (dependencyPack.code !== 0)
      throw new Error(`npm pack ${dependency} failed: ${dependencyPack.stderr}`);
  }
  const installed = join(options.dir, options.name);
  mkdirSync(installed);
  writeFileSync(
    join(installed, 'package.json'),
    `{ "name": "${options.name}", "private": true }\n`,
  );
  const install = await runIn(
    'npm',
    [
      'install',
      '--offline',
      '--no-audit',
      '--no-fund',
      ...readdirSync(tarballs).map((file) => join(tarballs, file)),
    ],
    installed,
  );
  return { packed, installed, install };
}

/** That `npm install` succeeded; if not, the failure shows what npm printed. */
export function expectInstalled(install: NodeRun): void {
  expect({ code: install.code, stderr: install.code === 0 ? '' : install.stderr }).toEqual({
    code: 0,
    stderr: '',
  });
}

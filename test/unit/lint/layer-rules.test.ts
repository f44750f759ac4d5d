import { posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { ESLint } from 'eslint';

// The layer table of eslint.config.js, proven pair by pair: a file in each folder is given an
// import of every folder of src/ its row does not allow, and of each package its row forbids,
// and the linter must refuse each one; the imports it allows must pass.
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

interface Pattern {
  group: string[];
  allowTypeImports?: boolean;
}
interface Row {
  folder: string;
  files?: string[];
  may: string[] | null;
  types?: string[];
  not: Pattern[];
}

let eslint: ESLint;
let LAYERS: Row[];
let SRC_FOLDERS: string[];

beforeAll(async () => {
  eslint = new ESLint({ cwd: ROOT });
  ({ LAYERS, SRC_FOLDERS } = (await import(`${ROOT}/eslint.config.js`)) as {
    LAYERS: Row[];
    SRC_FOLDERS: string[];
  });
});

/** A file of the row's own (a probe name no real file has), where its rule applies. */
const probeOf = (row: Row) =>
  row.files ? `${posix.dirname(row.files[0]!)}/layer-probe.ts` : `${row.folder}/layer-probe.ts`;

async function restrictions(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: `${ROOT}/${filePath}` });
  return result!.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

/** The import of src/<folder> as a file of `from` writes it. */
const importOf = (from: string, folder: string) => {
  let spec = posix.relative(posix.dirname(from), `src/${folder}/probe-target.js`);
  if (!spec.startsWith('.')) spec = `./${spec}`;
  return spec;
};

describe('the layer table of eslint.config.js', () => {
  it('has a row for every folder of src/ and names only real folders', async () => {
    const { readdirSync } = await import('node:fs');
    const real = readdirSync(`${ROOT}/src`, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
      .sort();
    expect([...SRC_FOLDERS].sort()).toEqual(real);
    for (const folder of real) expect(LAYERS.map((r) => r.folder)).toContain(`src/${folder}`);
  });

  it('refuses every import of a folder of src/ that a row does not allow', async () => {
    let pairs = 0;
    for (const row of LAYERS.filter((r) => r.may)) {
      const probe = probeOf(row);
      const own = row.folder.split('/')[1];
      for (const folder of SRC_FOLDERS) {
        if (folder === own) continue;
        const code = `import { x } from '${importOf(probe, folder)}';\nexport const y = x;\n`;
        const found = await restrictions(probe, code);
        if (row.may!.includes(folder)) {
          expect({ probe, folder, found }).toEqual({ probe, folder, found: [] });
        } else {
          pairs++;
          expect({ probe, folder, refused: found.length > 0 }).toEqual({
            probe,
            folder,
            refused: true,
          });
        }
      }
      // The composition root is above every folder.
      let app = posix.relative(posix.dirname(probe), 'src/app.js');
      if (!app.startsWith('.')) app = `./${app}`;
      expect(
        await restrictions(probe, `import { x } from '${app}';\nexport const y = x;\n`),
      ).not.toEqual([]);
    }
    expect(pairs).toBeGreaterThan(60);
  });

  it('allows types only where a row says types, and refuses values there', async () => {
    for (const row of LAYERS.filter((r) => r.types?.length)) {
      const probe = probeOf(row);
      for (const folder of row.types!) {
        const from = importOf(probe, folder);
        expect(
          await restrictions(probe, `import type { X } from '${from}';\nexport type Y = X;\n`),
        ).toEqual([]);
        expect(
          await restrictions(probe, `import { x } from '${from}';\nexport const y = x;\n`),
        ).not.toEqual([]);
      }
    }
  });

  it('refuses every package or path a row forbids', async () => {
    let pairs = 0;
    for (const row of LAYERS) {
      const probe = probeOf(row);
      for (const pattern of row.not) {
        if (pattern.allowTypeImports) continue;
        for (const spec of pattern.group) {
          // A glob stands for a module it matches; a plain name is the module itself.
          const module = spec
            .replace(/\*\*\//g, '../')
            .replace(/\/\*\*$/, '/x.js')
            .replace(/\*/g, 'x');
          const found = await restrictions(
            probe,
            `import { x } from '${module}';\nexport const y = x;\n`,
          );
          pairs++;
          expect({ probe, module, refused: found.length > 0 }).toEqual({
            probe,
            module,
            refused: true,
          });
        }
      }
    }
    expect(pairs).toBeGreaterThan(50);
  });

  it('keeps both store drivers out of every folder of src/ but their own adapter', async () => {
    for (const row of LAYERS.filter((r) => r.folder === 'src' || r.folder.startsWith('src/'))) {
      const probe = probeOf(row);
      const mongo = await restrictions(
        probe,
        `import { MongoClient } from 'mongodb';\nexport const c = MongoClient;\n`,
      );
      const sqlite = await restrictions(
        probe,
        `import Database from 'better-sqlite3';\nexport const d = Database;\n`,
      );
      expect({ probe, mongo: mongo.length > 0 }).toEqual({
        probe,
        mongo: row.folder !== 'src/storage/mongo',
      });
      expect({ probe, sqlite: sqlite.length > 0 }).toEqual({
        probe,
        sqlite: row.folder !== 'src/storage/sqlite',
      });
    }
  });
});

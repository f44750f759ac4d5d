import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { readCheckpointNote, TILE_WIDTH, tilePath, tilesOf } from '@svc/verify';
import { nativeHashBytes, progressBar, writeAtomically } from '@svc/verify/node';
import type { Store } from '../ports/store.js';
import { TransparencyLog } from '../services/transparency-log.js';

export interface ExportResult {
  origin: string;
  size: number;
  written: number;
  skipped: number;
  checkpointPath: string;
}

/**
 * `svc log export <dir>`: the newest stored checkpoint and every tile and entry bundle of its
 * size, as static files at the C2SP tlog-tiles paths, so any web server or bucket can serve
 * the log. Full tiles never change, so one already there is kept (a re-export writes what is
 * new); partial tiles are written under their own width, and older partial tiles stay for
 * clients holding an older checkpoint. The checkpoint is written last: a reader never sees a
 * checkpoint whose tiles are not all there. Every file is replaced atomically. The checkpoint
 * carries the witnesses' cosignature lines stored so far, as the service serves it.
 */
export async function exportLog(store: Store, dir: string): Promise<ExportResult> {
  const stored = await store.tree.latestCheckpoint();
  if (!stored) {
    throw new Error(
      'the ledger has no signed checkpoint yet: the service makes one after its first receipt',
    );
  }
  const checkpoint = readCheckpointNote(stored.note);
  if (!checkpoint) throw new Error('the newest stored checkpoint is not a checkpoint');
  // Reading only: no signing key, so nothing new is signed by an export.
  const log = new TransparencyLog({
    tree: store.tree,
    ledger: store.ledger,
    origin: checkpoint.origin,
    hash: nativeHashBytes,
  });
  const tiles = tilesOf(checkpoint.size);
  const bar = progressBar('exporting');
  const made = new Set<string>();
  let written = 0;
  let skipped = 0;
  for (const [i, tile] of tiles.entries()) {
    const path = join(dir, tilePath(tile));
    if (tile.width === TILE_WIDTH && existsSync(path)) {
      skipped += 1;
    } else {
      const parent = dirname(path);
      if (!made.has(parent)) {
        await mkdir(parent, { recursive: true });
        made.add(parent);
      }
      await writeAtomically(path, await log.tile(tile));
      written += 1;
    }
    bar.update(i + 1, tiles.length);
  }
  bar.done();
  await mkdir(dir, { recursive: true });
  const checkpointPath = join(dir, 'checkpoint');
  // As GET /v1/log/checkpoint serves it: with the witnesses' cosignatures stored so far.
  await writeAtomically(checkpointPath, (await log.served(stored)).note);
  return {
    origin: checkpoint.origin,
    size: checkpoint.size,
    written: written + 1,
    skipped,
    checkpointPath,
  };
}

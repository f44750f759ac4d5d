import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { readCheckpointNote, RECEIPT_ID_PATTERN, TILE_WIDTH, tilePath, tilesOf } from '@svc/verify';
import { nativeHashBytes, progressBar, writeAtomically } from '@svc/verify/node';
import type { Store } from '../ports/store.js';
import { TransparencyLog } from '../services/transparency-log.js';

export interface ExportResult {
  origin: string;
  size: number;
  written: number;
  skipped: number;
  checkpointPath: string;
  /** Receipts written with their tlog-proof files (with `receipts`), else 0. */
  receipts: number;
}

/** Receipts read from the ledger at a time while writing their proofs. */
const RECEIPT_PAGE = 500;

/**
 * `svc log export <dir>`: the newest stored checkpoint and every tile and entry bundle of its
 * size, as static files at the C2SP tlog-tiles paths, so any web server or bucket can serve
 * the log. Full tiles never change, so one already there is kept (a re-export writes what is
 * new); partial tiles are written under their own width, and older partial tiles stay for
 * clients holding an older checkpoint. The checkpoint is written last: a reader never sees a
 * checkpoint whose tiles are not all there. Every file is replaced atomically. The checkpoint
 * carries the witnesses' cosignature lines stored so far, as the service serves it.
 *
 * With `receipts`, every receipt of the checkpoint is written too, as `receipts/<id>.json`,
 * beside its C2SP tlog-proof@v1 `receipts/<id>.tlog-proof` against the exported checkpoint
 * (contract §14): with a tlog-policy, each pair verifies offline (svc-verify --proof). These
 * are every account's receipts: a directory served publicly publishes them.
 */
export async function exportLog(
  store: Store,
  dir: string,
  options: { receipts?: boolean } = {},
): Promise<ExportResult> {
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
  const receipts = options.receipts ? await exportReceipts(store, log, dir, checkpoint.size) : 0;
  return {
    origin: checkpoint.origin,
    size: checkpoint.size,
    written: written + 1,
    skipped,
    checkpointPath,
    receipts,
  };
}

/** Every receipt of the tree of `size` leaves and its tlog-proof against that tree's checkpoint. */
async function exportReceipts(
  store: Store,
  log: TransparencyLog,
  dir: string,
  size: number,
): Promise<number> {
  const receiptsDir = join(dir, 'receipts');
  await mkdir(receiptsDir, { recursive: true });
  const bar = progressBar('proving');
  let done = 0;
  while (done < size) {
    const page = await store.ledger.list(done, Math.min(RECEIPT_PAGE, size - done));
    if (page.length === 0) throw new Error(`the ledger holds ${done} receipts, the tree ${size}`);
    for (const entry of page) {
      const id = entry.receipt.receipt_id;
      // A file name: the id's own pattern keeps it inside the directory.
      if (!RECEIPT_ID_PATTERN.test(id)) throw new Error(`not a receipt id: ${JSON.stringify(id)}`);
      await writeAtomically(
        join(receiptsDir, `${id}.json`),
        `${JSON.stringify(entry.receipt, null, 2)}\n`,
      );
      await writeAtomically(
        join(receiptsDir, `${id}.tlog-proof`),
        await log.tlogProof(id, size, done),
      );
      done += 1;
    }
    bar.update(done, size);
  }
  bar.done();
  return done;
}

import type { Logger } from 'pino';
import type { Clock } from '../ports/clock.js';
import type { LogTreeStore } from '../ports/log-tree.js';
import type { TransparencyLog } from '../services/transparency-log.js';
import { WitnessCosigning, type Witness } from '../services/witness-cosigning.js';

/**
 * The writer's duties besides appending: a checkpoint whenever the tree grew since the last
 * one, sent to the configured witnesses for a cosignature in the background (a witness that
 * fails is logged and tried again with the next checkpoint). Only the process that writes the
 * ledger runs them. Returns the stop function.
 */
export function startWriterDuties(deps: {
  log: TransparencyLog;
  tree: LogTreeStore;
  witnesses: readonly Witness[];
  intervalMs: number;
  /** The least time between two checkpoints sent to one witness. */
  witnessMinIntervalMs?: number;
  clock: Clock;
  logger: Logger;
}): () => void {
  const { logger } = deps;
  const cosigning = new WitnessCosigning({
    log: deps.log,
    tree: deps.tree,
    witnesses: deps.witnesses,
    clock: deps.clock,
    minIntervalMs: deps.witnessMinIntervalMs,
  });
  const cosign = () =>
    cosigning.cosignLatest().then((outcomes) => {
      for (const o of outcomes) {
        if (o.outcome === 'failed') {
          logger.warn(
            { witness: o.witness, size: o.size, reason: o.reason },
            'witness did not cosign',
          );
        } else if (o.outcome === 'cosigned') {
          logger.debug({ witness: o.witness, size: o.size }, 'checkpoint cosigned');
        }
      }
    });
  const timer = setInterval(() => {
    deps.log.makeCheckpoint().then(
      () =>
        cosign().catch((error: unknown) =>
          logger.error({ err: error }, 'cannot ask the witnesses to cosign'),
        ),
      (error: unknown) => logger.error({ err: error }, 'cannot make a checkpoint'),
    );
  }, deps.intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}

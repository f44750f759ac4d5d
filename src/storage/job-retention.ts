import type { Clock } from '../ports/clock.js';

export const DEFAULT_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

/** A purge finds little new within a minute; polling more often would only add queries. */
export const PURGE_INTERVAL_MS = 60_000;

/**
 * Jobs deleted per statement: each statement is short, so a purge of a large backlog never
 * holds SQLite's write lock (which appends wait for) or MongoDB's resources for long.
 */
export const PURGE_BATCH = 1000;

/**
 * When the polling loop purges: at its first poll, then at most once per PURGE_INTERVAL_MS of
 * the queue's clock, never two purges of one queue at once. Several processes may purge at
 * the same time; each delete is conditional on the row still being finished and old enough.
 */
export class PurgeSchedule {
  private next = Number.NEGATIVE_INFINITY;
  private running: Promise<void> | undefined;

  constructor(
    private readonly clock: Clock,
    private readonly purge: () => Promise<number>,
    private readonly onError: (error: unknown) => void,
  ) {}

  poke(): void {
    const now = this.clock.now();
    if (this.running !== undefined || now < this.next) return;
    this.next = now + PURGE_INTERVAL_MS;
    this.running = this.purge()
      .then(() => undefined, this.onError)
      .finally(() => {
        this.running = undefined;
      });
  }

  /** Resolves once the purge under way, if any, has finished. */
  async settled(): Promise<void> {
    await this.running;
  }
}

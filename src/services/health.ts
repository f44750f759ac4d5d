import { utf8Bytes, verifyEd25519Strict } from '@svc/verify';
import { SERVICE_NAME, SERVICE_VERSION, SPEC_VERSION } from '../core/version.js';
import type { Clock } from '../ports/clock.js';
import type { JobQueue } from '../ports/job-queue.js';
import type { ServerKey } from '../ports/signer.js';
import type { Store } from '../ports/store.js';
import type { SigningKeyService } from './signing-keys.js';

export interface ComponentCheck {
  ok: boolean;
  latency_ms: number;
  error?: string;
}

const PROBE = utf8Bytes('svc health probe');

/**
 * The store's probe write is a real commit (and, on SQLite, a sync of the WAL), so deep health
 * starts at most one per this interval, and none while one is still running; checks in between
 * report the last one's result. A readiness probe called in a loop cannot turn into a stream
 * of writes.
 */
export const STORE_WRITE_PROBE_INTERVAL_MS = 1000;

export class HealthService {
  private readonly startedAt: number;
  private lastWrite?: { at: number; settled: boolean; done: Promise<void> };

  constructor(
    private readonly deps: {
      store: Store;
      serverKey: ServerKey;
      clock: Clock;
      jobs: JobQueue;
      /** The ledger's key history: the server's key must be its current key to sign. */
      signingKeys?: Pick<SigningKeyService, 'isCurrent'>;
      timeoutMs?: number;
    },
  ) {
    this.startedAt = deps.clock.now();
  }

  /**
   * The components svc has: its store, its signing key and its job queue
   * (docs/OPERATIONS.md). The store must answer a read and commit a write (to its health
   * probe record, outside the ledger): a store that can only be read cannot append receipts.
   */
  async deepChecks(): Promise<Record<'store' | 'signer' | 'jobs', ComponentCheck>> {
    return {
      store: await this.timed(async () => {
        await this.deps.store.ping();
        await this.probeWrite();
      }),
      signer: await this.timed(async () => {
        const signature = this.deps.serverKey.sign(PROBE);
        if (!verifyEd25519Strict(signature, PROBE, this.deps.serverKey.publicKeyRaw)) {
          throw new Error('signature does not verify');
        }
        // After `svc signing-key rotate` (or a revocation) and before the restart, the store
        // refuses every append this key signs: the service cannot sign, so it is unhealthy.
        // A history that cannot be read is the store check's failure, not the signer's.
        const current = await this.deps.signingKeys?.isCurrent(this.deps.serverKey.keyId).then(
          (yes) => yes,
          () => true,
        );
        if (current === false) {
          throw new Error(
            `the signing key ${this.deps.serverKey.keyId} is no longer the ledger's current key (rotated or revoked): restart the service with the current key`,
          );
        }
      }),
      jobs: await this.timed(async () => void (await this.deps.jobs.stats())),
    };
  }

  async status() {
    const stats = await this.deps.store.queries.totals();
    const memory = process.memoryUsage();
    const now = this.deps.clock.now();
    return {
      service: SERVICE_NAME,
      version: SERVICE_VERSION,
      spec_version: SPEC_VERSION,
      started_at: new Date(this.startedAt).toISOString(),
      uptime_seconds: Math.floor((now - this.startedAt) / 1000),
      receipts: {
        total: stats.total,
        accepted: stats.by_admissibility.ACCEPTED,
        blocked: stats.by_verdict.BLOCKED,
        escalated: stats.by_verdict.ESCALATED,
        non_deterministic: stats.by_admissibility.NON_DETERMINISTIC,
      },
      memory: {
        rss_bytes: memory.rss,
        heap_used_bytes: memory.heapUsed,
        heap_total_bytes: memory.heapTotal,
      },
      runtime: {
        name: 'node',
        version: process.version,
        platform: process.platform,
        arch: process.arch,
      },
      store: this.deps.store.kind,
    };
  }

  private probeWrite(): Promise<void> {
    const now = this.deps.clock.now();
    const last = this.lastWrite;
    if (
      last &&
      (!last.settled || (now >= last.at && now - last.at < STORE_WRITE_PROBE_INTERVAL_MS))
    )
      return last.done;
    const write: { at: number; settled: boolean; done: Promise<void> } = {
      at: now,
      settled: false,
      done: this.deps.store.probeWrite(new Date(now).toISOString()),
    };
    const settle = () => void (write.settled = true);
    write.done.then(settle, settle);
    this.lastWrite = write;
    return write.done;
  }

  private async timed(probe: () => Promise<void>): Promise<ComponentCheck> {
    const started = performance.now();
    const latency = () => Math.round((performance.now() - started) * 100) / 100;
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        probe(),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error('timed out')), this.deps.timeoutMs ?? 2000);
        }),
      ]);
      return { ok: true, latency_ms: latency() };
    } catch (error) {
      return { ok: false, latency_ms: latency(), error: (error as Error).message };
    } finally {
      clearTimeout(timer);
    }
  }
}

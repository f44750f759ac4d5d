import { verifyEd25519Strict } from '../core/ed25519.js';
import { utf8Bytes } from '../core/encoding.js';
import { SERVICE_NAME, SERVICE_VERSION, SPEC_VERSION } from '../core/version.js';
import type { Clock } from '../ports/clock.js';
import type { JobQueue } from '../ports/job-queue.js';
import type { ServerKey } from '../ports/signer.js';
import type { Store } from '../ports/store.js';

export interface ComponentCheck {
  ok: boolean;
  latency_ms: number;
  error?: string;
}

const PROBE = utf8Bytes('svc health probe');

export class HealthService {
  private readonly startedAt: number;

  constructor(
    private readonly deps: {
      store: Store;
      serverKey: ServerKey;
      clock: Clock;
      jobs: JobQueue;
      timeoutMs?: number;
    },
  ) {
    this.startedAt = deps.clock.now();
  }

  /**
   * The components svc has: its store, its signing key and its job queue
   * (docs/OPERATIONS.md). The store must answer a read and take a write (made and undone
   * outside the ledger): a store that can only be read cannot append receipts.
   */
  async deepChecks(): Promise<Record<'store' | 'signer' | 'jobs', ComponentCheck>> {
    return {
      store: await this.timed(async () => {
        await this.deps.store.ping();
        await this.deps.store.probeWrite();
      }),
      signer: await this.timed(async () => {
        const signature = this.deps.serverKey.sign(PROBE);
        if (!verifyEd25519Strict(signature, PROBE, this.deps.serverKey.publicKeyRaw)) {
          throw new Error('signature does not verify');
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

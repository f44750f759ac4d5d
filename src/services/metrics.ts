import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { JobQueue } from '../ports/job-queue.js';
import type { LedgerQueries } from '../ports/ledger-queries.js';
import type { LedgerStore } from '../ports/ledger-store.js';
import { DELIVERY_JOB } from '../ports/webhook-store.js';

/** Prometheus metrics of one app instance (its own registry, so instances do not share state). */
export class Metrics {
  readonly registry = new Registry();
  readonly httpDuration: Histogram<'method' | 'route' | 'status'>;
  readonly rateLimited: Counter<'scope'>;
  readonly receiptsIssued: Counter<'verdict' | 'admissibility'>;
  readonly webhookDeliveries: Counter<'outcome'>;

  constructor(deps: { ledger: LedgerStore; queries: LedgerQueries; jobs: JobQueue }) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: 'svc_' });
    renameTotalGauges(this.registry, registers);
    this.httpDuration = new Histogram({
      name: 'svc_http_request_duration_seconds',
      help: 'HTTP request duration by route template and status',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    });
    this.rateLimited = new Counter({
      name: 'svc_rate_limit_rejections_total',
      help: 'Requests refused with 429, by the limit that refused them',
      labelNames: ['scope'],
      registers,
    });
    this.receiptsIssued = new Counter({
      name: 'svc_receipts_issued_total',
      help: 'Receipts issued by this process since it started',
      labelNames: ['verdict', 'admissibility'],
      registers,
    });
    this.webhookDeliveries = new Counter({
      name: 'svc_webhook_delivery_attempts_total',
      help: 'Webhook delivery attempts by this process, by outcome (delivered, retrying, failed, disabled, dropped)',
      labelNames: ['outcome'],
      registers,
    });
    // Queue figures come from the shared queue, so every process reports the same backlog.
    new Gauge({
      name: 'svc_webhook_queue_depth',
      help: 'Webhook deliveries not finished yet (due, waiting for a retry, or running)',
      registers,
      async collect() {
        this.set((await deps.jobs.stats(DELIVERY_JOB)).pending);
      },
    });
    new Gauge({
      name: 'svc_webhook_oldest_pending_age_seconds',
      help: 'Age of the oldest unfinished webhook delivery; 0 when none is pending',
      registers,
      async collect() {
        this.set(((await deps.jobs.stats(DELIVERY_JOB)).oldestPendingAgeMs ?? 0) / 1000);
      },
    });
    // Ledger-wide figures come from the store at scrape time, so they are right after a
    // restart and across processes sharing one ledger.
    new Gauge({
      name: 'svc_ledger_height',
      help: 'Sequence number of the newest receipt in the ledger',
      registers,
      async collect() {
        this.set((await deps.ledger.head()).sequence);
      },
    });
    new Gauge({
      name: 'svc_ledger_receipts_by_verdict',
      help: 'Receipts in the ledger by policy verdict',
      labelNames: ['verdict'],
      registers,
      async collect() {
        const totals = await deps.queries.totals();
        for (const [verdict, n] of Object.entries(totals.by_verdict)) this.set({ verdict }, n);
      },
    });
    new Gauge({
      name: 'svc_ledger_receipts_by_admissibility',
      help: 'Receipts in the ledger by admissibility status',
      labelNames: ['admissibility'],
      registers,
      async collect() {
        const totals = await deps.queries.totals();
        for (const [admissibility, n] of Object.entries(totals.by_admissibility))
          this.set({ admissibility }, n);
      },
    });
  }
}

// Among prom-client's default metrics are three gauges named like counters: `_total` promises
// a counter, and promtool refuses it on a gauge. Each is the sum over `type` of the gauge
// beside it (svc_nodejs_active_handles{type}), so it is served as `..._all_types`, its values
// still read by prom-client's own collector.
export const RENAMED_DEFAULT_GAUGES: Record<string, string> = {
  svc_nodejs_active_handles_total: 'svc_nodejs_active_handles_all_types',
  svc_nodejs_active_requests_total: 'svc_nodejs_active_requests_all_types',
  svc_nodejs_active_resources_total: 'svc_nodejs_active_resources_all_types',
};

function renameTotalGauges(registry: Registry, registers: Registry[]): void {
  for (const [from, to] of Object.entries(RENAMED_DEFAULT_GAUGES)) {
    const original = registry.getSingleMetric(from);
    // A Node without the underlying API has no such gauge.
    if (!original) continue;
    registry.removeSingleMetric(from);
    const base = from.slice(0, -'_total'.length);
    new Gauge({
      name: to,
      help: `Sum over every type of ${base}`,
      registers,
      async collect() {
        const { values } = await original.get();
        this.reset();
        for (const { labels, value } of values) this.set(labels, value);
      },
    });
  }
}

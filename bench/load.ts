import autocannon from 'autocannon';
import { percentile } from './latency.js';

export interface LoadOptions {
  url: string;
  connections: number;
  durationSeconds: number;
  requests: autocannon.Request[];
  headers?: Record<string, string>;
}

export interface LoadResult {
  /** 2xx responses per second of wall time. */
  rps: number;
  p50_ms: number;
  p99_ms: number;
  /** Responses by status code, and connection errors and timeouts. */
  status_codes: Record<string, number>;
  responses_2xx: number;
  non_2xx: number;
  errors: number;
  timeouts: number;
  duration_s: number;
  /** When the load ran, in microseconds of the monotonic clock (see cpuprofile-top.ts). */
  window_us: [number, number];
}

// Per-response times are kept here at full resolution: autocannon's own histogram rounds to
// whole milliseconds, which hides everything under 1 ms.

/** One bounded closed-loop run; latencies are of 2xx responses only. */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  let times = new Float64Array(1 << 16);
  let count = 0;
  const started = performance.now();
  const from = Number(process.hrtime.bigint() / 1000n);
  let instance!: autocannon.Instance;
  const done = new Promise<autocannon.Result>((resolve, reject) => {
    instance = autocannon(
      {
        url: options.url,
        connections: options.connections,
        duration: options.durationSeconds,
        requests: options.requests,
        headers: options.headers,
        timeout: 10,
        // autocannon stops at the first sample after the duration; the default sample of
        // 1 s would stretch a short run to a whole second. Its per-sample rates are unused.
        sampleInt: 100,
      },
      (error: unknown, result) => (error ? reject(error) : resolve(result)),
    );
  });
  instance.on('response', (_client, statusCode, _bytes, responseTime) => {
    if (statusCode < 200 || statusCode >= 300) return;
    if (count === times.length) {
      const grown = new Float64Array(times.length * 2);
      grown.set(times);
      times = grown;
    }
    times[count++] = responseTime;
  });
  const result = await done;
  const to = Number(process.hrtime.bigint() / 1000n);
  const elapsed = (performance.now() - started) / 1000;
  const sorted = times.subarray(0, count).sort();
  const statusCodes: Record<string, number> = {};
  for (const [code, stats] of Object.entries(result.statusCodeStats ?? {})) {
    statusCodes[code] = stats.count ?? 0;
  }
  return {
    rps: Math.round(count / Math.min(elapsed, result.duration || elapsed)),
    p50_ms: round(percentile(sorted, 50)),
    p99_ms: round(percentile(sorted, 99)),
    status_codes: statusCodes,
    responses_2xx: count,
    non_2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    duration_s: round(result.duration),
    window_us: [from, to],
  };
}

const round = (n: number) => (Number.isFinite(n) ? Number(n.toFixed(2)) : n);

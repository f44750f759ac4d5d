import autocannon from 'autocannon';
import http from 'node:http';
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
  const elapsed = (performance.now() - started) / 1000;
  const statusCodes: Record<string, number> = {};
  for (const [code, stats] of Object.entries(result.statusCodeStats ?? {})) {
    statusCodes[code] = stats.count ?? 0;
  }
  return resultOf(times.subarray(0, count), {
    seconds: Math.min(elapsed, result.duration || elapsed),
    duration: result.duration,
    from,
    status_codes: statusCodes,
    non_2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
  });
}

/**
 * A run's result from its 2xx latencies, the seconds its rate is over (`duration`, the run's
 * own length when another clock measured it) and its other counts.
 */
function resultOf(
  times: Float64Array,
  run: Pick<LoadResult, 'status_codes' | 'non_2xx' | 'errors' | 'timeouts'> & {
    seconds: number;
    duration?: number;
    /** When the run started, in microseconds of the monotonic clock. */
    from: number;
  },
): LoadResult {
  const { seconds, duration = seconds, from, ...counts } = run;
  const sorted = times.sort();
  return {
    rps: Math.round(sorted.length / seconds),
    p50_ms: round(percentile(sorted, 50)),
    p99_ms: round(percentile(sorted, 99)),
    ...counts,
    responses_2xx: sorted.length,
    duration_s: round(duration),
    window_us: [from, Number(process.hrtime.bigint() / 1000n)],
  };
}

/**
 * Sessions that each send one request every `1 / rate` seconds on their own keep-alive
 * connection, at a phase of their own (drawn at random), as independent agents do: unlike
 * autocannon's connectionRate, which starts every connection's request at the same instant, so
 * that each tick is a burst of all of them. A request whose turn comes while the session's last
 * one is unanswered is sent on the answer, and its latency counts from its turn (the wait
 * included), so a slow answer is not hidden by the requests it held back.
 */
export async function runPaced(options: LoadOptions & { rate: number }): Promise<LoadResult> {
  const url = new URL(options.url);
  const period = 1000 / options.rate;
  const started = performance.now();
  const from = Number(process.hrtime.bigint() / 1000n);
  const end = started + options.durationSeconds * 1000;
  const times: number[] = [];
  const statusCodes: Record<string, number> = {};
  let errors = 0;
  let non2xx = 0;
  const session = async (agent: http.Agent) => {
    const template = options.requests[0]!;
    let due = started + Math.random() * period;
    while (due < end) {
      const wait = due - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const request =
        typeof template.setupRequest === 'function'
          ? template.setupRequest({ ...template }, {})
          : template;
      const body = typeof request.body === 'string' ? request.body : '';
      try {
        const status = await new Promise<number>((resolve, reject) => {
          const req = http.request(
            {
              host: url.hostname,
              port: url.port,
              path: request.path ?? '/',
              method: request.method ?? 'GET',
              agent,
              headers: { ...request.headers, 'content-length': Buffer.byteLength(body) },
            },
            (res) => {
              res.resume();
              res.on('end', () => resolve(res.statusCode ?? 0));
              res.on('error', reject);
            },
          );
          req.on('error', reject);
          req.setTimeout(10_000, () => req.destroy(new Error('timeout')));
          req.end(body);
        });
        statusCodes[status] = (statusCodes[status] ?? 0) + 1;
        if (status >= 200 && status < 300) times.push(performance.now() - due);
        else non2xx++;
      } catch {
        errors++;
      }
      due += period;
    }
  };
  const agents = Array.from(
    { length: options.connections },
    () => new http.Agent({ keepAlive: true, maxSockets: 1 }),
  );
  await Promise.all(agents.map(session));
  for (const agent of agents) agent.destroy();
  return resultOf(Float64Array.from(times), {
    seconds: (performance.now() - started) / 1000,
    from,
    status_codes: statusCodes,
    non_2xx: non2xx,
    errors,
    timeouts: 0,
  });
}

const round = (n: number) => (Number.isFinite(n) ? Number(n.toFixed(2)) : n);

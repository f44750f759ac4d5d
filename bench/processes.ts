import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';

export const LOOPBACK = '127.0.0.1';

const children = new Set<ChildProcess>();

// Last resort: whatever path the harness leaves by, no server it started outlives it.
process.on('exit', () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
});

export interface Spawned {
  readonly name: string;
  readonly url: string;
  readonly process: ChildProcess;
  /** Graceful stop (SIGTERM, then SIGKILL after `graceMs`); resolves once the process exited. */
  stop(graceMs?: number): Promise<void>;
}

/** A port free on the loopback address right now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, LOOPBACK);
  await once(server, 'listening');
  const address = server.address();
  server.close();
  await once(server, 'close');
  if (address === null || typeof address === 'string') throw new Error('no port assigned');
  return address.port;
}

function track(name: string, child: ChildProcess, url: string): Spawned {
  children.add(child);
  child.once('exit', () => children.delete(child));
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  return {
    name,
    url,
    process: child,
    async stop(graceMs = 10_000) {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
        await exited;
        clearTimeout(timer);
      }
    },
  };
}

/** Kills every process this module started that is still running. */
export async function stopAll(): Promise<void> {
  await Promise.all(
    [...children].map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGTERM');
          setTimeout(() => child.kill('SIGKILL'), 5_000).unref();
        }),
    ),
  );
}

async function waitUntilAnswering(
  child: ChildProcess,
  url: string,
  stderr: () => string,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exited = false;
  child.once('exit', () => (exited = true));
  while (Date.now() < deadline) {
    if (exited) throw new Error(`server at ${url} exited before answering: ${stderr().trim()}`);
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(1_000) });
      await response.arrayBuffer();
      if (response.ok) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`server at ${url} did not answer within ${timeoutMs} ms: ${stderr().trim()}`);
}

/**
 * Starts a Node script on a free loopback port and waits until `readyPath` answers 200.
 * The environment is built from scratch so that variables of the caller's shell (a signing
 * key, a data directory) cannot change what is measured.
 */
export async function startNode(options: {
  name: string;
  script: string;
  args?: string[];
  nodeArgs?: string[];
  env?: Record<string, string>;
  readyPath: string;
  timeoutMs?: number;
  /** The node binary (default: the one running the harness), to run under another Node line. */
  execPath?: string;
  /** The port to listen on (default: a free one), to restart a server where clients expect it. */
  port?: number;
  /** Every chunk of the server's stdout and stderr, for a caller that reads its logs. */
  onOutput?: (stream: 'stdout' | 'stderr', chunk: string) => void;
}): Promise<Spawned> {
  const port = options.port ?? (await freePort());
  const onOutput = options.onOutput;
  const child = spawn(
    options.execPath ?? process.execPath,
    [...(options.nodeArgs ?? []), options.script, ...(options.args ?? [])],
    {
      env: {
        PATH: process.env.PATH ?? '',
        NODE_ENV: 'production',
        PORT: String(port),
        HOST: LOOPBACK,
        ...options.env,
      },
      stdio: ['ignore', onOutput ? 'pipe' : 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    // Bounded: a chatty server must not grow the harness's memory during a long run.
    stderr = (stderr + chunk).slice(-8_192);
    onOutput?.('stderr', chunk);
  });
  child.stdout?.setEncoding('utf8');
  child.stdout?.on('data', (chunk: string) => onOutput?.('stdout', chunk));
  const url = `http://${LOOPBACK}:${port}`;
  const spawned = track(options.name, child, url);
  try {
    await waitUntilAnswering(
      child,
      url + options.readyPath,
      () => stderr,
      options.timeoutMs ?? 20_000,
    );
  } catch (error) {
    await spawned.stop(1_000);
    throw error;
  }
  return spawned;
}

import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { TranspiledTree } from '../fixtures/transpile-tree.js';
import { childEnvBase } from './child-env.js';

/** A port nothing listens on (at the moment of asking). */
export async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The pids of a process's children, from /proc (Linux). */
export function childrenOf(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`).flatMap((task) =>
    readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8')
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map(Number),
  );
}

export interface ServerProcess {
  child: ChildProcess;
  port: number;
  url: string;
  stdout(): string;
  stderr(): string;
  /** Every JSON line written to stdout so far. */
  logLines(): Record<string, unknown>[];
  /** The exit code (null when killed by a signal). */
  exited: Promise<number | null>;
  /** SIGKILLs the process and its workers, if still running. */
  kill(): void;
}

/** `src/server.ts` of a transpiled tree in a child process, with exactly this environment. */
export function startServerProcess(
  tree: TranspiledTree,
  port: number,
  env: Record<string, string>,
): ServerProcess {
  const child = spawn(process.execPath, [fileURLToPath(tree.url('src/server.ts'))], {
    env: {
      ...childEnvBase(),
      HOST: '127.0.0.1',
      PORT: String(port),
      SVC_ANON_LIMIT_PER_HOUR: 'unlimited',
      SVC_SIGNUP_LIMIT_PER_HOUR: 'unlimited',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  return {
    child,
    port,
    url: `http://127.0.0.1:${port}`,
    stdout: () => stdout,
    stderr: () => stderr,
    logLines: () =>
      stdout
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>),
    exited,
    kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const workers = childrenOf(child.pid!);
      child.kill('SIGKILL');
      for (const pid of workers) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }
    },
  };
}

export async function until<T>(
  what: string,
  probe: () => Promise<T | null> | T | null,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const value = await probe();
      if (value !== null) return value;
    } catch {
      // Not yet.
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** What came back on a raw connection by the time the server closed it. */
export interface RawAnswer {
  /** The status of the answer's status line; null when none came. */
  status: number | null;
  /** The answer's headers, lowercased names; empty when none came. */
  headers: Record<string, string>;
  body: string;
  /** The socket error (ECONNRESET, ECONNREFUSED, ...), if the connection failed. */
  error?: string;
  /** Milliseconds from the connection's start to its close. */
  elapsedMs: number;
}

export interface RawRequest {
  /** Resolves when the server closed the connection (or it failed). */
  answer: Promise<RawAnswer>;
  /**
   * Resolves once the connection is up and the request's head was sent; with `expectContinue`,
   * once the server answered `100 Continue`: it has read the head and waits for the body.
   */
  sent: Promise<void>;
  /** Sends the rest of the body (when it was held back). */
  finish(): void;
}

/**
 * A POST of a JSON body on its own connection, written by hand so that a test controls when
 * each byte goes out and sees resets as they are. `hold` sends only the head and waits for
 * `finish()`; `trickleMs` sends the body one byte per interval. The connection is kept alive
 * unless `close` is set: a server that drains must close it itself. `expectContinue` asks for
 * `100 Continue` (as curl does for large bodies), which tells when the request is in flight.
 */
export function rawPost(
  port: number,
  path: string,
  body: string,
  options: {
    hold?: boolean;
    trickleMs?: number;
    close?: boolean;
    expectContinue?: boolean;
    headers?: Record<string, string>;
  } = {},
): RawRequest {
  const started = Date.now();
  const socket = connect(port, '127.0.0.1');
  let received = '';
  let error: string | undefined;
  let timer: NodeJS.Timeout | undefined;
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (received += chunk));
  const head =
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    (options.close ? 'Connection: close\r\n' : '') +
    (options.expectContinue ? 'Expect: 100-continue\r\n' : '') +
    Object.entries(options.headers ?? {})
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('') +
    '\r\n';
  const sent = new Promise<void>((resolve, reject) => {
    socket.once('connect', () => {
      if (options.trickleMs !== undefined) {
        socket.write(head);
        let i = 0;
        timer = setInterval(() => {
          if (i < body.length && socket.writable) socket.write(body[i++]!);
        }, options.trickleMs);
      } else if (options.hold) socket.write(head);
      else socket.write(head + body);
      if (!options.expectContinue) resolve();
    });
    if (options.expectContinue) {
      socket.on('data', () => {
        if (/^HTTP\/1\.1 100 [^\r]*\r\n\r\n/.test(received)) resolve();
      });
      socket.once('close', () => reject(new Error('closed before 100 Continue')));
    }
    socket.once('error', reject);
  });
  sent.catch(() => undefined);
  const answer = new Promise<RawAnswer>((resolve) => {
    socket.on('error', (e: NodeJS.ErrnoException) => (error = e.code ?? e.message));
    socket.once('close', () => {
      clearInterval(timer);
      const final = received.replace(/^HTTP\/1\.1 100 [^\r]*\r\n\r\n/, '');
      const [headText = '', ...rest] = final.split('\r\n\r\n');
      const [statusLine = '', ...headerLines] = headText.split('\r\n');
      const status = /^HTTP\/1\.1 (\d{3})/.exec(statusLine);
      resolve({
        status: status ? Number(status[1]) : null,
        headers: Object.fromEntries(
          headerLines.map((line) => {
            const colon = line.indexOf(':');
            return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()];
          }),
        ),
        body: rest.join('\r\n\r\n'),
        ...(error === undefined ? {} : { error }),
        elapsedMs: Date.now() - started,
      });
    });
  });
  return {
    answer,
    sent,
    finish: () => {
      socket.write(body);
    },
  };
}

import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { MongoClient } from 'mongodb';
import type { Store } from '../../../src/ports/store.js';
import { openMongoStore } from '../../../src/storage/mongo/mongo-store.js';
import { openSqliteStore } from '../../../src/storage/sqlite/sqlite-store.js';
import { transpileTree, type TranspiledTree } from '../../fixtures/transpile-tree.js';
import { validClaim } from '../../support/claims.js';
import { startReceiver, type TestReceiver } from '../../support/webhook-receiver.js';

const PER_PROCESS = 15;

interface Service {
  child: ChildProcess;
  base: string;
  exited: Promise<number | null>;
  stderr: () => string;
}

/** Starts src/server.ts in a child process and resolves once it listens (port 0). */
function startService(script: string, env: Record<string, string | undefined>): Promise<Service> {
  const child = spawn(process.execPath, [script], {
    env: env as NodeJS.ProcessEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    let buffered = '';
    const timer = setTimeout(() => reject(new Error(`no "svc listening" line: ${stderr}`)), 20_000);
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      buffered += chunk;
      let newline;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        const entry = JSON.parse(line) as { msg?: string; port?: number };
        if (entry.msg === 'svc listening') {
          clearTimeout(timer);
          resolve({ child, base: `http://127.0.0.1:${entry.port}`, exited, stderr: () => stderr });
        }
      }
    });
    void exited.then((code) => reject(new Error(`exited with ${code}: ${stderr}`)));
  });
}

/** How the two processes share a store, and how the test reads it afterwards. */
interface Backend {
  /** The environment of the n-th process, beyond the common one. */
  env(root: string, n: number): Record<string, string>;
  open(root: string): Promise<Store>;
  cleanup(): Promise<void>;
}

// Two processes on one data directory, as two `npm start` on one machine would run.
const embedded: Backend = {
  env: (root) => ({ SVC_DATA_DIR: join(root, 'data') }),
  open: async (root) => openSqliteStore(join(root, 'data', 'ledger.db')),
  cleanup: async () => {},
};

// jest.config.js moves MONGODB_URI here, out of the environment of the processes tests start.
const mongoUri = process.env.SVC_TEST_MONGODB_URI;
const database = `svc_two_${randomUUID().replace(/-/g, '').slice(0, 16)}`;
const signingKey = generateKeyPairSync('ed25519')
  .privateKey.export({ type: 'pkcs8', format: 'pem' })
  .toString();
const encryptionSecret = randomBytes(32).toString('base64');

// Two instances on one MongoDB database, as in production: each with a data directory of its
// own and the same signing key and encryption secret from the environment.
const mongodb: Backend = {
  env: (root, n) => ({
    SVC_DATA_DIR: join(root, `instance-${n}`),
    MONGODB_URI: mongoUri!,
    MONGODB_DATABASE: database,
    SVC_SIGNING_KEY: signingKey,
    SVC_KEY_ENCRYPTION_SECRET: encryptionSecret,
  }),
  open: () => openMongoStore(mongoUri!, { database }),
  async cleanup() {
    const admin = await new MongoClient(mongoUri!).connect();
    await admin.db(database).dropDatabase();
    await admin.close();
  },
};

describeTwoProcesses('two service processes on one data directory', embedded, {
  sharedLimits: false,
});
if (mongoUri) {
  describeTwoProcesses('two service instances on one MongoDB database', mongodb, {
    sharedLimits: true,
  });
} else {
  describe.skip('two service instances on one MongoDB database (skipped: MONGODB_URI is not set)', () => {
    it('keep one chain, deliver every receipt once and share rate-limit windows', () => {});
  });
}

function describeTwoProcesses(
  title: string,
  backend: Backend,
  { sharedLimits }: { sharedLimits: boolean },
): void {
  describe(title, () => {
    let tree: TranspiledTree;
    let root: string;
    let receiver: TestReceiver;
    const services: Service[] = [];

    beforeAll(async () => {
      tree = transpileTree(['src/server.ts']);
      root = mkdtempSync(join(tmpdir(), 'svc-two-'));
      receiver = await startReceiver();
      const script = fileURLToPath(tree.url('src/server.ts'));
      const env = (n: number) => ({
        ...process.env,
        ...backend.env(root, n),
        HOST: '127.0.0.1',
        PORT: '0',
        LOG_LEVEL: 'info',
        SVC_ALLOW_PRIVATE_WEBHOOK_URLS: 'true',
        SVC_ANON_LIMIT_PER_HOUR: 'unlimited',
        SVC_SIGNUP_LIMIT_PER_HOUR: 'unlimited',
      });
      services.push(
        ...(await Promise.all([startService(script, env(0)), startService(script, env(1))])),
      );
    }, 60_000);
    afterAll(async () => {
      for (const s of services) if (s.child.exitCode === null) s.child.kill('SIGKILL');
      await Promise.all(services.map((s) => s.exited));
      await receiver.close();
      tree.cleanup();
      await backend.cleanup();
      rmSync(root, { recursive: true, force: true });
    });

    if (sharedLimits) {
      it('give a free key exactly 100 requests an hour across both', async () => {
        const [a, b] = services as [Service, Service];
        const signup = await request(a.base).post('/v1/signup').send({ email: 'free@example.com' });
        expect(signup.status).toBe(201);
        const key = signup.body.api_key as string;
        const statuses: number[] = [];
        for (let i = 0; i < 110; i++) {
          const res = await request(i % 2 ? a.base : b.base)
            .get('/v1/account')
            .set('X-API-Key', key);
          statuses.push(res.status);
        }
        expect(statuses.filter((s) => s === 200)).toHaveLength(100);
        expect(statuses.slice(100)).toEqual(Array(10).fill(429));
        const account = await request(b.base).get('/v1/account').set('X-API-Key', key);
        expect(account.status).toBe(429);
        expect(account.headers['x-ratelimit-remaining']).toBe('0');
      }, 60_000);
    }

    it('keep one gap-free chain and deliver every receipt once', async () => {
      const [a, b] = services as [Service, Service];
      const signup = await request(a.base).post('/v1/signup').send({ email: 'two@example.com' });
      expect(signup.status).toBe(201);
      const key = signup.body.api_key as string;
      await request(b.base)
        .post('/v1/webhooks/outbound')
        .set('X-API-Key', key)
        .send({ url: receiver.url, event: 'receipt.created' })
        .expect(201);

      const responses = await Promise.all(
        Array.from({ length: 2 * PER_PROCESS }, (_, i) =>
          request(i % 2 ? a.base : b.base)
            .post('/v1/evaluate')
            .set('X-API-Key', key)
            .send(validClaim()),
        ),
      );
      for (const res of responses) expect(res.status).toBe(200);
      const issued = new Map(responses.map((r) => [r.body.receipt.receipt_id, r.body.receipt]));

      const deadline = Date.now() + 20_000;
      while (
        new Set(receiver.received.map((r) => JSON.parse(r.body).receipt_id)).size < issued.size &&
        Date.now() < deadline
      ) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      // Give a duplicate, if one were coming, the chance to arrive.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      for (const s of services) s.child.kill('SIGTERM');
      expect(await Promise.all(services.map((s) => s.exited))).toEqual([0, 0]);

      // Every receipt arrived as evaluate returned it; a repeat would carry the same webhook-id.
      const byReceipt = new Map<string, Set<string>>();
      for (const got of receiver.received) {
        const receipt = JSON.parse(got.body);
        expect(receipt).toEqual(issued.get(receipt.receipt_id));
        const ids = byReceipt.get(receipt.receipt_id) ?? new Set();
        ids.add(String(got.headers['webhook-id']));
        byReceipt.set(receipt.receipt_id, ids);
      }
      expect([...byReceipt.keys()].sort()).toEqual([...issued.keys()].sort());
      for (const ids of byReceipt.values()) expect(ids.size).toBe(1);
      expect(receiver.received).toHaveLength(issued.size);

      const store = await backend.open(root);
      try {
        const entries = await store.ledger.list(0, 1000);
        expect(entries.map((e) => e.receipt.chain.sequence)).toEqual(
          Array.from({ length: issued.size }, (_, i) => i + 1),
        );
        entries.forEach((e, i) =>
          expect(e.receipt.chain.previous_receipt_hash).toBe(
            i === 0 ? null : entries[i - 1]!.receipt.chain.receipt_hash,
          ),
        );
        const jobs = store.openJobQueue({ clock: { now: () => Date.now() } });
        expect(await jobs.stats()).toEqual({ pending: 0, failed: 0, oldestPendingAgeMs: null });
      } finally {
        await store.close();
      }
    }, 60_000);
  });
}

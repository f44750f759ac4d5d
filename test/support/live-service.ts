import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildTestApp, type TestApp } from './harness.js';
import { signupAccount, signupReviewer, uniqueEmail } from './api.js';
import { validClaim } from './claims.js';

export interface LiveService {
  t: TestApp;
  /** Base URL, http://127.0.0.1:<port>. */
  url: string;
  /** A fresh API key from POST /v1/signup, with its public key_id. */
  signup(): Promise<{ apiKey: string; keyId: string; email: string }>;
  /** A fresh signup key the operator made a reviewer (it may record dispositions). */
  signupReviewer(): Promise<{ apiKey: string; keyId: string; email: string }>;
  /** POST /v1/evaluate; the parsed JSON body. */
  evaluate(apiKey: string, claim?: Record<string, unknown>): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

/**
 * The in-process app listening on 127.0.0.1, for code under test that runs in a child
 * process (the CLI, the bundled Action) and speaks real HTTP to it.
 */
export async function startLiveService(options: Parameters<typeof buildTestApp>[0] = {}) {
  const t = buildTestApp(options);
  const server: Server = await new Promise((resolve) => {
    const s = t.app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const post = async (path: string, body: unknown, apiKey?: string) => {
    const res = await fetch(url + path, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...(apiKey ? { 'X-API-Key': apiKey } : {}) },
      body: JSON.stringify(body),
    });
    const json = (await res.json()) as Record<string, unknown>;
    if (!res.ok) throw new Error(`${path} answered ${res.status}: ${JSON.stringify(json)}`);
    return json;
  };
  const live: LiveService = {
    t,
    url,
    signup: () => signupAccount(t, uniqueEmail('live')),
    signupReviewer: () => signupReviewer(t, uniqueEmail('live-reviewer')),
    evaluate: (apiKey, claim = validClaim()) => post('/v1/evaluate', claim, apiKey),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await t.close();
    },
  };
  return live;
}

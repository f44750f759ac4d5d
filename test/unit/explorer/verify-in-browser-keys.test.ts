import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { VerifyResult } from '@svc/verify';
import type { ServerKey } from '../../../src/ports/signer.js';
import type { Store } from '../../../src/ports/store.js';
import { SigningKeyService } from '../../../src/services/signing-keys.js';
import { openSqliteStore } from '../../../src/storage/sqlite/sqlite-store.js';
import { forgedPrefixHistory, resignReceipt } from '../../support/forged-key.js';
import { ManualClock, newServerKey } from '../../support/harness.js';
import { startLiveService, type LiveService } from '../../support/live-service.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const ORIGIN = 'explorer.example/ledger';

// The browser module is type-checked with the DOM's types (tsconfig.client.json), not with
// this suite's: it is imported by a path the type-checker does not follow.
const CLIENT_MODULE = '../../../src/explorer/client/verify-in-browser.js';
type VerifyInBrowser = (input: {
  receiptText: string;
  mode: 'pin' | 'history';
  fingerprint: string;
  checkpointText: string;
}) => Promise<{ result: VerifyResult; trust: string }>;

// The explorer's "verify in this browser" module, its requests answered by a live service
// except GET /v1/keys, which a test may replace with a history that lies.
describe('verify in this browser, pinned to a key', () => {
  let dir: string;
  let store: Store;
  let after: LiveService;
  let oldKey: ServerKey;
  let newKey: ServerKey;
  let receipt: Json;
  let keysBody: string | null = null;
  const realFetch = globalThis.fetch;
  let verifyInBrowser: VerifyInBrowser;

  beforeAll(async () => {
    ({ verifyInBrowser } = (await import(CLIENT_MODULE)) as { verifyInBrowser: VerifyInBrowser });
    dir = mkdtempSync(join(tmpdir(), 'svc-explorer-keys-'));
    store = openSqliteStore(join(dir, 'ledger.db'));
    const keys = new SigningKeyService({
      store: store.signingKeys,
      clock: new ManualClock(Date.now()),
      origin: ORIGIN,
    });
    oldKey = newServerKey();
    newKey = newServerKey();
    await keys.register(oldKey);
    await keys.rotate(oldKey, newKey);
    after = await startLiveService({ store, serverKey: newKey, logOrigin: ORIGIN });
    const { apiKey } = await after.signup();
    receipt = (await after.evaluate(apiKey)).receipt as Json;
    (globalThis as Json).sessionStorage = { getItem: () => null };
    globalThis.fetch = ((path: string, init?: RequestInit) =>
      path === '/v1/keys' && keysBody !== null
        ? Promise.resolve(new Response(keysBody, { status: 200 }))
        : realFetch(`${after.url}${path}`, init)) as typeof fetch;
  });
  afterAll(async () => {
    globalThis.fetch = realFetch;
    delete (globalThis as Json).sessionStorage;
    await after.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const check = (result: VerifyResult, name: string) =>
    result.checks.find((c) => c.name === name)?.status;

  it('verifies a genuine receipt under the pin and under the published history', async () => {
    keysBody = null;
    for (const mode of ['pin', 'history'] as const) {
      const { result } = await verifyInBrowser({
        receiptText: JSON.stringify(receipt),
        mode,
        fingerprint: newKey.keyId,
        checkpointText: '',
      });
      expect(check(result, 'signature_valid')).toBe('PASS');
    }
  });

  it('does not trust a key put before the pin with a transition it signed itself', async () => {
    const forgedKey = newServerKey();
    const served = (await (await realFetch(`${after.url}/v1/keys`)).json()) as never;
    keysBody = JSON.stringify(forgedPrefixHistory(served, newKey, forgedKey));
    const { result, trust } = await verifyInBrowser({
      receiptText: JSON.stringify(resignReceipt(receipt, forgedKey)),
      mode: 'pin',
      fingerprint: newKey.keyId,
      checkpointText: '',
    });
    expect(result.valid).toBe(false);
    expect(check(result, 'signature_valid')).toBe('FAIL');
    expect(trust).toBe(
      `the pinned key ${newKey.keyId} and the 0 later key(s) its signed transitions introduce`,
    );
  });
});

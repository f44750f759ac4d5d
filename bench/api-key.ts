import { join } from 'node:path';
import { openSqliteStore } from '../src/storage/sqlite/sqlite-store.js';
import type { Spawned } from './processes.js';

const EMAIL = 'bench@example.com';

/** An API key on the unlimited tier: signed up over HTTP, promoted through the store. */
export async function enterpriseKey(service: Spawned, dataDir: string): Promise<string> {
  // One address per key: a data dir is reused across runs, and an address signs up once.
  const email = EMAIL.replace('@', `+${Date.now().toString(36)}@`);
  const response = await fetch(`${service.url}/v1/signup`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ email }),
  });
  const body = (await response.json()) as { api_key?: string };
  if (!response.ok || !body.api_key) throw new Error(`signup answered ${response.status}`);
  // A second connection to the service's database; WAL lets it write beside the server.
  const store = openSqliteStore(join(dataDir, 'ledger.db'));
  try {
    const record = await store.apiKeys.setTier(email, 'enterprise', new Date().toISOString());
    if (record?.tier !== 'enterprise') throw new Error('could not set the enterprise tier');
  } finally {
    await store.close();
  }
  return body.api_key;
}

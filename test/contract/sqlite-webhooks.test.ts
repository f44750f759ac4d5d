import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from '@jest/globals';
import { openSqliteStore } from '../../src/storage/sqlite/sqlite-store.js';
import { describeWebhookAndJobContract } from './webhooks-and-jobs.contract.js';
import { describeWebhookScopeContract } from './webhook-scope.contract.js';

const dirs: string[] = [];

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describeWebhookAndJobContract('SQLite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-contract-webhooks-'));
  dirs.push(dir);
  return openSqliteStore(join(dir, 'ledger.db'));
});

describeWebhookScopeContract('SQLite', async (webhookScope) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-contract-webhooks-'));
  dirs.push(dir);
  return openSqliteStore(join(dir, 'ledger.db'), { webhookScope });
});

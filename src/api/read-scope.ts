import type { Response } from 'express';
import type { ReadScope } from '../ports/ledger-queries.js';
import { apiKeySubmitter } from '../services/claims.js';

/**
 * Whose receipts a read covers. Public reads: every receipt. Private reads (every read route
 * then needs a key): the key's own account's, unless the operator made the key a reader of
 * everything (`svc keys create --reader all`).
 */
export const readScopeOf = (res: Response, publicReads: boolean): ReadScope => {
  const key = res.locals.apiKey;
  if (publicReads || key?.reader === 'all') return undefined;
  // Private routes never run without a key (route-table.ts); fail closed all the same.
  if (!key) throw new Error('private read without an API key');
  return apiKeySubmitter(key).scope;
};

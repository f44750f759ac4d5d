import type { Database } from 'better-sqlite3';
import type { LedgerEntry } from '../../ports/ledger-store.js';
import { entryReader, type ReceiptFields } from '../mappers.js';
import { policyConfigsOf } from './policy-configs.js';

export type ReceiptRow = ReceiptFields;

export const ENTRY_COLUMNS = 'receipt_json, claim_json, evaluation_json, api_key_id';

/**
 * The entry of a row of `db`, its policy config read back from policy_configs when the row
 * names it by ref (storage/sqlite/policy-configs.ts); the mapping is the stores' shared one.
 */
export const sqliteEntryReader = (db: Database): ((row: ReceiptRow) => LedgerEntry) =>
  entryReader(policyConfigsOf(db).text);

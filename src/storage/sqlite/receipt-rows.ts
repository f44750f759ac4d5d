import type { LedgerEntry } from '../../ports/ledger-store.js';

export interface ReceiptRow {
  receipt_json: string;
  claim_json: string;
  evaluation_json: string;
  api_key_id: string | null;
}

export const ENTRY_COLUMNS = 'receipt_json, claim_json, evaluation_json, api_key_id';

export const toEntry = (row: ReceiptRow): LedgerEntry => ({
  receipt: JSON.parse(row.receipt_json),
  claim: JSON.parse(row.claim_json),
  evaluation: JSON.parse(row.evaluation_json),
  apiKeyId: row.api_key_id,
});

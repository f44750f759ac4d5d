import type { ReceiptFields } from '../mappers.js';

export type ReceiptRow = ReceiptFields;

export const ENTRY_COLUMNS = 'receipt_json, claim_json, evaluation_json, api_key_id';

// The mapping is the stores' shared one.
export { toEntry } from '../mappers.js';

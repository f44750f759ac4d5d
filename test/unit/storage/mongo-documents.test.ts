import { describe, expect, it } from '@jest/globals';
import {
  duplicateKeyFields,
  isDuplicateOn,
  toEntry,
} from '../../../src/storage/mongo/documents.js';

describe('MongoDB duplicate-key errors', () => {
  it('names the fields of keyPattern', () => {
    const error = Object.assign(new Error('E11000 duplicate key error'), {
      code: 11000,
      keyPattern: { scope: 1, claim_id: 1 },
    });
    expect(duplicateKeyFields(error)).toEqual(['scope', 'claim_id']);
    expect(isDuplicateOn(error, 'claim_id')).toBe(true);
    expect(isDuplicateOn(error, 'sequence')).toBe(false);
  });

  it('falls back to the index name in the message', () => {
    const error = {
      code: 11000,
      message:
        'E11000 duplicate key error collection: svc.receipts index: sequence_unique dup key: { sequence: 5 }',
    };
    expect(duplicateKeyFields(error)).toEqual(['sequence_unique']);
    expect(isDuplicateOn(error, 'sequence')).toBe(true);
    expect(isDuplicateOn(error, 'receipt_id')).toBe(false);
  });

  it('is null for every other error', () => {
    expect(duplicateKeyFields(new Error('boom'))).toBeNull();
    expect(duplicateKeyFields({ code: 112, codeName: 'WriteConflict' })).toBeNull();
    expect(duplicateKeyFields(null)).toBeNull();
    expect(isDuplicateOn('E11000', 'sequence')).toBe(false);
  });
});

describe('stored entries', () => {
  it('come back from their JSON text exactly, members without a value included', () => {
    const receipt = { receipt_id: 'dr-1', score: 1.5, n: 1, nested: { a: [1, null] } };
    const entry = toEntry({
      receipt_json: JSON.stringify(receipt),
      claim_json: '{"claim_id":"c-1"}',
      evaluation_json: '{"policy":{}}',
      api_key_id: null,
    });
    expect(entry).toEqual({
      receipt,
      claim: { claim_id: 'c-1' },
      evaluation: { policy: {} },
      apiKeyId: null,
    });
    expect(JSON.stringify(entry.receipt)).toBe(JSON.stringify(receipt));
  });
});

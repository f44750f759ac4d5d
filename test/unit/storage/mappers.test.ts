import { describe, expect, it } from '@jest/globals';
import type { ApiKeyRecord } from '../../../src/ports/api-key-store.js';
import { foldVerdicts } from '../../../src/storage/counters.js';
import {
  apiKeyFields,
  toAgentSummary,
  toApiKeyRecord,
  toDeliveryAttempt,
  toDeliveryWork,
  entryReader,
  toEntry,
  toPolicyRecord,
  toRepositorySummary,
  toWebhookDelivery,
  toWebhookReceiver,
  storedReceiptFields,
  type ReceiverFields,
} from '../../../src/storage/mappers.js';
import { appendRequest, makeClaim, signClaim } from '../../contract/ledger-fixtures.js';
import { newServerKey } from '../../support/harness.js';

const AT = '2026-01-15T10:00:00.000Z';
const serverKey = newServerKey();
const counters = {
  total: 6,
  allowed: 3,
  blocked: 2,
  escalated: 1,
  accepted: 4,
  non_deterministic: 0,
  rejected: 2,
};

describe('the stores’ shared mappers', () => {
  it('an API key goes to its stored fields and back unchanged, its id kept apart', () => {
    const record: ApiKeyRecord = {
      id: 'acct-1',
      keyId: 'kid_01',
      email: 'a@example.com',
      keyDigest: 'ab'.repeat(32),
      tier: 'pilot',
      lockedPolicy: 'strict',
      reader: 'all',
      reviewer: true,
      createdAt: AT,
      updatedAt: AT,
      revokedAt: null,
    };
    const fields = apiKeyFields(record);
    expect(fields).not.toHaveProperty('key_id');
    expect(fields).not.toHaveProperty('_id');
    expect(toApiKeyRecord('kid_01', fields)).toEqual(record);
  });

  it('a key stored before readers existed reads its own account', () => {
    const old: Partial<ReturnType<typeof apiKeyFields>> = apiKeyFields({
      id: 'acct-1',
      keyId: 'kid_01',
      email: 'a@example.com',
      keyDigest: 'ab'.repeat(32),
      tier: 'free',
      lockedPolicy: null,
      reader: 'all',
      reviewer: true,
      createdAt: AT,
      updatedAt: AT,
      revokedAt: AT,
    });
    delete old.reader;
    delete old.reviewer;
    const read = toApiKeyRecord('kid_01', old as Parameters<typeof toApiKeyRecord>[1]);
    expect(read.reader).toBe('own');
    // Nor does it decide escalations: the operator grants that.
    expect(read.reviewer).toBe(false);
  });

  it('a receipt’s texts are parsed into the entry', () => {
    expect(
      toEntry({
        receipt_json: '{"receipt_id":"r1"}',
        claim_json: '{"claim_id":"c1"}',
        evaluation_json: '{"verdict":"ALLOWED"}',
        api_key_id: null,
      }),
    ).toEqual({
      receipt: { receipt_id: 'r1' },
      claim: { claim_id: 'c1' },
      evaluation: { verdict: 'ALLOWED' },
      apiKeyId: null,
    });
  });

  it('an appended receipt is stored with its indexed values and its exact texts', () => {
    const { entry } = appendRequest(
      signClaim(makeClaim({ kind: 'blocked' }), serverKey, { scope: 'key:k1' }),
    ).build({
      sequence: 0,
      receipt_hash: null,
    });
    const { receipt } = entry;
    const fields = storedReceiptFields(entry, 'key:k1');
    expect(fields).toEqual({
      sequence: 1,
      receipt_id: receipt.receipt_id,
      claim_id: entry.claim.claim_id,
      scope: 'key:k1',
      inputs_hash: receipt.evidence.inputs_hash,
      receipt_hash: receipt.chain.receipt_hash,
      issued_at: receipt.issued_at,
      verdict: 'BLOCKED',
      admissibility: receipt.admissibility.status,
      entity: entry.claim.entity,
      agent: 'coder-bot',
      repository: 'acme/web',
      // A number in the receipt, text in both stores' pull_request index.
      pull_request: '42',
      api_key_id: entry.apiKeyId,
      receipt_json: JSON.stringify(receipt),
      claim_json: JSON.stringify(entry.claim),
      evaluation_json: JSON.stringify(entry.evaluation),
    });
    expect(toEntry(fields)).toEqual(entry);

    // With a config ref (SQLite): the evaluation names its config instead of holding it, and
    // is read back whole, its members in the order they were appended.
    const byRef = storedReceiptFields(entry, 'key:k1', 'sha256:feed');
    const stored = JSON.parse(byRef.evaluation_json) as Record<string, unknown>;
    expect(stored).not.toHaveProperty('config');
    expect(stored['config_ref']).toBe('sha256:feed');
    const asked: string[] = [];
    const read = entryReader((ref) => {
      asked.push(ref);
      return JSON.stringify(entry.evaluation.config);
    })(byRef);
    expect(read).toEqual(entry);
    expect(Object.keys(read.evaluation)).toEqual(Object.keys(entry.evaluation));
    expect(asked).toEqual(['sha256:feed']);
    // A row stored before configs had refs holds its config, and is read as it is.
    expect(entryReader(() => 'never asked')(fields)).toEqual(entry);
    // Without a way to read refs (MongoDB documents never hold one), a ref is an error.
    expect(() => toEntry(byRef)).toThrow(/config by ref/);
  });

  it('a receipt without agent, repository or pull request stores nulls, not absent fields', () => {
    const claim = makeClaim({ agent: null, repository: null });
    delete (claim.action as Record<string, unknown>).pull_request;
    const { entry } = appendRequest(signClaim(claim, serverKey, { scope: 'key:k1' })).build({
      sequence: 0,
      receipt_hash: null,
    });
    const fields = storedReceiptFields(entry, 'key:k1');
    expect([fields.agent, fields.repository, fields.pull_request]).toEqual([null, null, null]);
  });

  it('a deleted receiver is handed out as disabled, never as deleted', () => {
    const fields: ReceiverFields = {
      owner: 'acct-1',
      url: 'https://hooks.example.com/a',
      event: 'receipt.created',
      secret_sealed: 'sealed',
      status: 'deleted',
      created_at: AT,
      disabled_at: AT,
      disabled_reason: null,
    };
    expect(toWebhookReceiver('wh_1', fields)).toEqual({
      id: 'wh_1',
      owner: 'acct-1',
      url: 'https://hooks.example.com/a',
      event: 'receipt.created',
      secretSealed: 'sealed',
      status: 'disabled',
      createdAt: AT,
      disabledAt: AT,
      disabledReason: null,
    });
    expect(toWebhookReceiver('wh_1', { ...fields, status: 'active' }).status).toBe('active');
  });

  it('a delivery’s work hands out no receiver when it was deleted, a disabled one as is', () => {
    const receiver: ReceiverFields & { id: string } = {
      id: 'wh_1',
      owner: 'acct-1',
      url: 'https://hooks.example.com/a',
      event: 'receipt.created',
      secret_sealed: 'sealed',
      status: 'active',
      created_at: AT,
      disabled_at: null,
      disabled_reason: null,
    };
    const delivery = {
      id: 'd1',
      receiver_id: 'wh_1',
      receipt_id: 'r1',
      event: 'receipt.created',
      status: 'pending' as const,
      attempts: 0,
      created_at: AT,
      finished_at: null,
    };
    const work = toDeliveryWork(delivery, receiver, '{"receipt_id":"r1"}');
    expect(work).toEqual({
      delivery: toWebhookDelivery('d1', delivery),
      receiver: toWebhookReceiver('wh_1', receiver),
      receiptJson: '{"receipt_id":"r1"}',
    });
    const deleted = { ...receiver, status: 'deleted' as const };
    expect(toDeliveryWork(delivery, deleted, '{}').receiver).toBeNull();
    expect(toDeliveryWork(delivery, undefined, '{}').receiver).toBeNull();
    const disabled = { ...receiver, status: 'disabled' as const, disabled_at: AT };
    expect(toDeliveryWork(delivery, disabled, '{}').receiver).toMatchObject({
      status: 'disabled',
    });
  });

  it('deliveries and attempts keep every field', () => {
    expect(
      toWebhookDelivery('d1', {
        receiver_id: 'wh_1',
        receipt_id: 'r1',
        event: 'receipt.created',
        status: 'failed',
        attempts: 3,
        created_at: AT,
        finished_at: AT,
      }),
    ).toEqual({
      id: 'd1',
      receiverId: 'wh_1',
      receiptId: 'r1',
      event: 'receipt.created',
      status: 'failed',
      attempts: 3,
      createdAt: AT,
      finishedAt: AT,
    });
    expect(
      toDeliveryAttempt({
        delivery_id: 'd1',
        attempt: 2,
        at: AT,
        status_code: 503,
        error: 'unavailable',
        duration_ms: 12,
        next_attempt_at: null,
      }),
    ).toEqual({
      deliveryId: 'd1',
      attempt: 2,
      at: AT,
      statusCode: 503,
      error: 'unavailable',
      durationMs: 12,
      nextAttemptAt: null,
    });
  });

  it('a policy’s owner comes from the store, its config from the JSON text', () => {
    const fields = {
      name: 'strict',
      description: null,
      config_json: '{"min_sources":2}',
      overrides: 'tighten' as const,
      created_at: AT,
    };
    expect(toPolicyRecord(null, fields)).toEqual({
      owner: null,
      name: 'strict',
      description: null,
      config: { min_sources: 2 },
      overrides: 'tighten',
      createdAt: AT,
    });
  });

  it('verdict counts fold the grouped rows, a verdict without rows counting 0', () => {
    expect(
      foldVerdicts([
        { verdict: 'BLOCKED', n: 2 },
        { verdict: 'ALLOWED', n: 5 },
        { verdict: 'BLOCKED', n: 1 },
      ]),
    ).toEqual({ ALLOWED: 5, BLOCKED: 3, ESCALATED: 0, total: 8 });
    expect(foldVerdicts([])).toEqual({ ALLOWED: 0, BLOCKED: 0, ESCALATED: 0, total: 0 });
  });

  it('summaries fold the counters into verdicts and admissibility', () => {
    expect(
      toRepositorySummary('acme/web', {
        ...counters,
        last_sequence: 9,
        last_receipt_id: 'r9',
        last_issued_at: AT,
      }),
    ).toEqual({
      repository: 'acme/web',
      total: 6,
      by_verdict: { ALLOWED: 3, BLOCKED: 2, ESCALATED: 1 },
      by_admissibility: { ACCEPTED: 4, NON_DETERMINISTIC: 0, REJECTED: 2 },
      last_receipt: { receipt_id: 'r9', sequence: 9, issued_at: AT },
    });
    expect(
      toAgentSummary('bot', { ...counters, first_seen: AT, last_seen: AT }, ['gpt', 'o3']),
    ).toEqual({
      agent: 'bot',
      total: 6,
      by_verdict: { ALLOWED: 3, BLOCKED: 2, ESCALATED: 1 },
      by_admissibility: { ACCEPTED: 4, NON_DETERMINISTIC: 0, REJECTED: 2 },
      models: ['gpt', 'o3'],
      first_seen: AT,
      last_seen: AT,
    });
  });
});

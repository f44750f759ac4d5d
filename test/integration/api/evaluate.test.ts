import { createHash, createPublicKey } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { buildTestApp, type TestApp } from '../../support/harness.js';
import {
  clone,
  expectCommonHeaders,
  expectError,
  HASH,
  type Json,
  ledgerState,
  newKey,
  postRaw,
  RECEIPT_ID,
} from '../../support/api.js';
import { RULE_ORDER } from '../../../src/core/rules/threshold-rules.js';
import { DEFAULT_CONFIG } from '../../support/policies.js';
import {
  H,
  nobleVerifies,
  serverPublicKey,
  signedMessage,
  V2_FIELDS,
} from '../../support/receipts.js';
import { validClaim } from '../../support/claims.js';

const source = (overrides: Json = {}) => ({
  id: `src-${Math.random().toString(36).slice(2)}`,
  type: 'ci',
  uri: 'https://ci.example/run/9',
  confidence: 0.9,
  content: 'green',
  ...overrides,
});

describe('POST /v1/evaluate', () => {
  let t: TestApp;
  let key: string;

  const evaluate = (body: unknown) =>
    request(t.app)
      .post('/v1/evaluate')
      .set('X-API-Key', key)
      .send(body as object);

  beforeEach(async () => {
    t = buildTestApp();
    key = await newKey(t, 'enterprise');
  });
  afterEach(() => t.close());

  it('answers claim, decision, policy, replay and a signed, chained receipt', async () => {
    const claim = validClaim();
    const res = await evaluate(claim);
    expect(res.status).toBe(200);
    expectCommonHeaders(res);
    expect(res.headers['idempotent-replay']).toBeUndefined();
    expect(Object.keys(res.body).sort()).toEqual([
      'claim',
      'decision',
      'policy',
      'receipt',
      'replay',
    ]);

    const rules = [
      { rule: 'min_sources', passed: true, reason: '2 admissible sources, minimum 1' },
      { rule: 'min_source_types', passed: true, reason: '2 distinct source types, minimum 1' },
      { rule: 'min_confidence', passed: true, reason: 'average confidence 0.85, minimum 0.5' },
      { rule: 'require_provenance', passed: true, reason: 'provenance not required' },
      { rule: 'require_human_approval', passed: true, reason: 'human approval not required' },
      { rule: 'max_risk_scope', passed: true, reason: 'risk scope of 0 areas, maximum 5' },
    ];
    const inputsHash = H(claim);
    const replayHash = H({
      inputs_hash: inputsHash,
      policy: DEFAULT_CONFIG,
      verdict: 'ALLOWED',
      rules,
    });
    const { receipt } = res.body;
    const issuedAt = new Date(t.clock.now()).toISOString();

    expect(res.body).toEqual({
      claim,
      decision: {
        proceed: true,
        verdict: 'ALLOWED',
        admissibility: 'ACCEPTED',
        reason: 'Proceed: verdict ALLOWED and the receipt is admissible',
      },
      policy: {
        verdict: 'ALLOWED',
        reason: 'All 6 policy rules passed',
        rules,
        config: DEFAULT_CONFIG,
      },
      replay: { passed: true, deterministic: true, replay_hash: replayHash },
      receipt: {
        receipt_id: expect.stringMatching(RECEIPT_ID),
        issued_at: issuedAt,
        claim_id: claim.claim_id,
        admissibility: { status: 'ACCEPTED', reason: 'verdict ALLOWED; replay passed' },
        subject: {
          entity: 'acme/web',
          agent: 'coder-bot',
          repository: 'acme/web',
          pull_request: 42,
          action_type: 'merge',
          target_system: 'github',
          commit: 'a1b2c3d',
          branch: 'main',
        },
        evidence: { inputs_hash: inputsHash, source_count: 2, source_types: ['ci', 'code_review'] },
        replay: { deterministic: true, replay_hash: replayHash },
        policy: {
          status: 'PASS',
          verdict: 'ALLOWED',
          checks: [],
          name: 'default',
          config_hash: H(DEFAULT_CONFIG),
          overrides: false,
        },
        signed_fields: { contract: 'receipt-core-v2', fields: V2_FIELDS },
        submitter: {
          kind: 'api_key',
          key_id: expect.stringMatching(/^kid_[0-9A-HJKMNP-TV-Z]{26}$/),
        },
        position: {
          log: `svc/${t.serverKey.keyId.slice('sha256:'.length, 'sha256:'.length + 16)}`,
          sequence: 1,
          previous_receipt_hash: null,
        },
        attestations: [
          {
            signer: 'svc-server',
            algorithm: 'Ed25519',
            key_id: t.serverKey.keyId,
            signature: expect.stringMatching(/^[A-Za-z0-9+/]{86}==$/),
            timestamp: issuedAt,
          },
        ],
        chain: {
          sequence: 1,
          previous_receipt_hash: null,
          receipt_hash: expect.stringMatching(HASH),
        },
      },
    });
    expect(Object.keys(receipt).sort()).toEqual([...V2_FIELDS, 'attestations', 'chain'].sort());
    expect(Buffer.from(receipt.attestations[0].signature, 'base64')).toHaveLength(64);
    // receipt-core-v2: the chain hash covers the whole signed core and the attestations.
    const core = Object.fromEntries(V2_FIELDS.map((f) => [f, receipt[f]]));
    expect(receipt.chain.receipt_hash).toBe(H({ core, attestations: receipt.attestations }));
    const account = await request(t.app).get('/v1/account').set('X-API-Key', key);
    expect(receipt.submitter.key_id).toBe(account.body.key_id);
  });

  it('the key_id is SHA-256 over the DER SubjectPublicKeyInfo of the published key', async () => {
    const res = await evaluate(validClaim());
    const pem = (await request(t.app).get('/v1/keys/server')).text;
    const der = createPublicKey(pem).export({ format: 'der', type: 'spki' });
    const keyId = `sha256:${createHash('sha256').update(der).digest('hex')}`;
    expect(res.body.receipt.attestations[0].key_id).toBe(keyId);
  });

  it('the signature verifies with @noble/ed25519 (strict) under the published key', async () => {
    const res = await evaluate(validClaim());
    const receipt = res.body.receipt as Json;
    const publicKey = await serverPublicKey(t);

    // The same key read the other way: the 32 bytes after the 12-byte SPKI prefix.
    const pem = (await request(t.app).get('/v1/keys/server')).text;
    const der = Buffer.from(pem.replace(/-----[A-Z ]+-----|\s/g, ''), 'base64');
    expect(der.subarray(0, 12).toString('hex')).toBe('302a300506032b6570032100');
    expect(new Uint8Array(der.subarray(12))).toEqual(publicKey);
    expect(publicKey).toEqual(t.serverKey.publicKeyRaw);

    expect(await nobleVerifies(receipt, publicKey)).toBe(true);

    // The message is the JCS of exactly the signed members: position is, the chain is not.
    const core = Object.fromEntries(V2_FIELDS.map((f) => [f, receipt[f]]));
    expect(new TextDecoder().decode(signedMessage(receipt))).toBe(sortedJson(core));
    const tampered = clone(receipt);
    (tampered.subject as Json).entity = 'acme/other';
    expect(await nobleVerifies(tampered, publicKey)).toBe(false);
    const moved = clone(receipt);
    (moved.chain as Json).sequence = 99;
    expect(await nobleVerifies(moved, publicKey)).toBe(true);
    const repositioned = clone(receipt);
    (repositioned.position as Json).sequence = 99;
    expect(await nobleVerifies(repositioned, publicKey)).toBe(false);
  });

  it('appends exactly one ledger entry holding the receipt, the claim and the key', async () => {
    const claim = validClaim();
    const res = await evaluate(claim);
    const { head, entries, stats } = await ledgerState(t);
    expect(head).toEqual({ sequence: 1, receipt_hash: res.body.receipt.chain.receipt_hash });
    expect(entries).toHaveLength(1);
    const record = await t.store.apiKeys.findByDigest(
      createHash('sha256').update(key, 'utf8').digest('hex'),
    );
    expect(entries[0]).toEqual({
      receipt: res.body.receipt,
      claim,
      evaluation: {
        policy: {
          verdict: res.body.policy.verdict,
          reason: res.body.policy.reason,
          rules: res.body.policy.rules,
        },
        replay: res.body.replay,
        config: DEFAULT_CONFIG,
      },
      apiKeyId: record!.id,
    });
    expect(stats).toEqual({
      total: 1,
      by_verdict: { ALLOWED: 1, BLOCKED: 0, ESCALATED: 0 },
      by_admissibility: { ACCEPTED: 1, NON_DETERMINISTIC: 0, REJECTED: 0 },
      agents: ['coder-bot'],
      repositories: ['acme/web'],
    });
    expect(await t.store.ledger.receiptHashOf(res.body.receipt.receipt_id)).toBe(
      res.body.receipt.chain.receipt_hash,
    );
  });

  it('chains receipts: sequence 1, 2, 3, each linked to the previous receipt_hash', async () => {
    const receipts: Json[] = [];
    for (let i = 0; i < 3; i++) {
      t.clock.advance(1000);
      receipts.push((await evaluate(validClaim())).body.receipt);
    }
    const chains = receipts.map((r) => r.chain as Json);
    expect(chains.map((c) => c.sequence)).toEqual([1, 2, 3]);
    expect(chains[0]!.previous_receipt_hash).toBeNull();
    expect(chains[1]!.previous_receipt_hash).toBe(chains[0]!.receipt_hash);
    expect(chains[2]!.previous_receipt_hash).toBe(chains[1]!.receipt_hash);
    expect(receipts.map((r) => r.issued_at)).toEqual([
      '2026-01-15T10:00:01.000Z',
      '2026-01-15T10:00:02.000Z',
      '2026-01-15T10:00:03.000Z',
    ]);
    const ids = receipts.map((r) => r.receipt_id as string);
    expect([...ids].sort()).toEqual(ids);
    const { entries, head } = await ledgerState(t);
    expect(entries.map((e) => e.receipt)).toEqual(receipts);
    expect(head).toEqual({ sequence: 3, receipt_hash: chains[2]!.receipt_hash });
  });

  describe('verdicts and admissibility', () => {
    const cases: {
      name: string;
      claim: () => Json;
      verdict: string;
      admissibility: string;
      status: string;
      failed: string[];
      proceed: string;
    }[] = [
      {
        name: 'low confidence is BLOCKED',
        claim: () =>
          validClaim({
            sources: [source({ confidence: 0.2 }), source({ type: 'scm', confidence: 0.3 })],
          }),
        verdict: 'BLOCKED',
        admissibility: 'REJECTED',
        status: 'FAIL',
        failed: ['min_confidence'],
        proceed: 'Do not proceed: verdict BLOCKED',
      },
      {
        name: 'policyConfig.minSources above the count is BLOCKED',
        claim: () => validClaim({ policyConfig: { minSources: 3, minSourceTypes: 3 } }),
        verdict: 'BLOCKED',
        admissibility: 'REJECTED',
        status: 'FAIL',
        failed: ['min_sources', 'min_source_types'],
        proceed: 'Do not proceed: verdict BLOCKED',
      },
      {
        name: 'requireProvenance without provenance is BLOCKED',
        claim: () => validClaim({ policyConfig: { requireProvenance: true } }),
        verdict: 'BLOCKED',
        admissibility: 'REJECTED',
        status: 'FAIL',
        failed: ['require_provenance'],
        proceed: 'Do not proceed: verdict BLOCKED',
      },
      {
        name: 'requireProvenance with provenance is ALLOWED',
        claim: () =>
          validClaim({
            policyConfig: { requireProvenance: true },
            sources: [
              source({
                provenance: {
                  captured_at: '2026-01-15T09:59:00Z',
                  snapshot_id: 'snap-1',
                  collector: 'ci-bot',
                  chain_of_custody: ['ci', 'svc'],
                },
              }),
            ],
          }),
        verdict: 'ALLOWED',
        admissibility: 'ACCEPTED',
        status: 'PASS',
        failed: [],
        proceed: 'Proceed: verdict ALLOWED and the receipt is admissible',
      },
      {
        name: 'access_change without human approval is ESCALATED',
        claim: () => validClaim({ action: { action_type: 'access_change', target_system: 'iam' } }),
        verdict: 'ESCALATED',
        admissibility: 'REJECTED',
        status: 'ESCALATE',
        failed: [],
        proceed: 'Route to a human: verdict ESCALATED',
      },
      {
        name: 'policy_exception with a human_approval source is ALLOWED',
        claim: () =>
          validClaim({
            action: { action_type: 'policy_exception', target_system: 'opa' },
            sources: [source({ type: 'human_approval' })],
          }),
        verdict: 'ALLOWED',
        admissibility: 'ACCEPTED',
        status: 'PASS',
        failed: [],
        proceed: 'Proceed: verdict ALLOWED and the receipt is admissible',
      },
      {
        name: 'a production deployment is ESCALATED',
        claim: () =>
          validClaim({
            action: { action_type: 'deployment', target_system: 'k8s', environment: 'Production' },
          }),
        verdict: 'ESCALATED',
        admissibility: 'REJECTED',
        status: 'ESCALATE',
        failed: [],
        proceed: 'Route to a human: verdict ESCALATED',
      },
      {
        name: 'a risk scope over maxRiskScope is ESCALATED',
        claim: () =>
          validClaim({
            action: {
              action_type: 'infra_change',
              target_system: 'aws',
              risk_scope: ['a', 'b', 'c', 'd', 'e', 'f'],
            },
          }),
        verdict: 'ESCALATED',
        admissibility: 'REJECTED',
        status: 'ESCALATE',
        failed: ['max_risk_scope'],
        proceed: 'Route to a human: verdict ESCALATED',
      },
      {
        name: 'requireHumanApproval without one is ESCALATED',
        claim: () => validClaim({ policyConfig: { requireHumanApproval: true } }),
        verdict: 'ESCALATED',
        admissibility: 'REJECTED',
        status: 'ESCALATE',
        failed: ['require_human_approval'],
        proceed: 'Route to a human: verdict ESCALATED',
      },
      {
        name: 'a hard failure wins over review: BLOCKED',
        claim: () =>
          validClaim({
            policyConfig: { requireHumanApproval: true, minConfidence: 0.95 },
          }),
        verdict: 'BLOCKED',
        admissibility: 'REJECTED',
        status: 'FAIL',
        failed: ['min_confidence', 'require_human_approval'],
        proceed: 'Do not proceed: verdict BLOCKED',
      },
      {
        name: 'expected_replay_match: false is NON_DETERMINISTIC',
        claim: () => validClaim({ expected_replay_match: false }),
        verdict: 'ALLOWED',
        admissibility: 'NON_DETERMINISTIC',
        status: 'PASS',
        failed: [],
        proceed: 'Do not proceed: the evaluation did not replay as expected',
      },
      {
        name: 'expected_replay_match: false without requireReplay is ACCEPTED',
        claim: () =>
          validClaim({ expected_replay_match: false, policyConfig: { requireReplay: false } }),
        verdict: 'ALLOWED',
        admissibility: 'ACCEPTED',
        status: 'PASS',
        failed: [],
        proceed: 'Proceed: verdict ALLOWED and the receipt is admissible',
      },
      {
        name: 'expected_replay_match: true is ACCEPTED',
        claim: () => validClaim({ expected_replay_match: true }),
        verdict: 'ALLOWED',
        admissibility: 'ACCEPTED',
        status: 'PASS',
        failed: [],
        proceed: 'Proceed: verdict ALLOWED and the receipt is admissible',
      },
      {
        name: 'a required source marked INADMISSIBLE is BLOCKED',
        claim: () =>
          validClaim({
            sources: [
              source(),
              source({ admissibility: { state: 'INADMISSIBLE', reason: 'stale', required: true } }),
            ],
          }),
        verdict: 'BLOCKED',
        admissibility: 'REJECTED',
        status: 'FAIL',
        failed: ['min_sources'],
        proceed: 'Do not proceed: verdict BLOCKED',
      },
    ];

    it.each(cases)('$name', async ({ claim, verdict, admissibility, status, failed, proceed }) => {
      const body = claim();
      const res = await evaluate(body);
      expect(res.status).toBe(200);
      expect(res.body.decision).toEqual({
        proceed: verdict === 'ALLOWED' && admissibility === 'ACCEPTED',
        verdict,
        admissibility,
        reason: proceed,
      });
      expect(res.body.policy.verdict).toBe(verdict);
      expect(res.body.policy.rules.map((r: Json) => r.rule)).toEqual(RULE_ORDER);
      expect(res.body.policy.config).toEqual({
        ...DEFAULT_CONFIG,
        ...((body.policyConfig as Json | undefined) ?? {}),
      });
      const { receipt } = res.body;
      expect(receipt.admissibility.status).toBe(admissibility);
      expect(receipt.policy).toMatchObject({ status, verdict });
      // policy.checks lists exactly the failed rules, as policy.rules has them.
      expect(receipt.policy.checks.map((c: Json) => c.rule)).toEqual(failed);
      expect(receipt.policy.checks).toEqual(res.body.policy.rules.filter((r: Json) => !r.passed));
      const expectedReplay = body.expected_replay_match;
      expect(res.body.replay).toEqual({
        passed: expectedReplay === undefined ? true : expectedReplay === true,
        deterministic: true,
        replay_hash: H({
          inputs_hash: H(body),
          policy: res.body.policy.config,
          verdict,
          rules: res.body.policy.rules,
        }),
      });
      expect(await nobleVerifies(receipt, t.serverKey.publicKeyRaw)).toBe(true);
      const { entries } = await ledgerState(t);
      expect(entries).toHaveLength(1);
      expect(entries[0]!.receipt).toEqual(receipt);
    });

    it('ledger stats count every verdict and admissibility', async () => {
      for (const { claim } of cases) expect((await evaluate(claim())).status).toBe(200);
      const { stats, head } = await ledgerState(t);
      const count = (pick: (c: (typeof cases)[number]) => boolean) => cases.filter(pick).length;
      expect(head.sequence).toBe(cases.length);
      expect(stats.total).toBe(cases.length);
      expect(stats.by_verdict).toEqual({
        ALLOWED: count((c) => c.verdict === 'ALLOWED'),
        BLOCKED: count((c) => c.verdict === 'BLOCKED'),
        ESCALATED: count((c) => c.verdict === 'ESCALATED'),
      });
      expect(stats.by_admissibility).toEqual({
        ACCEPTED: count((c) => c.admissibility === 'ACCEPTED'),
        NON_DETERMINISTIC: count((c) => c.admissibility === 'NON_DETERMINISTIC'),
        REJECTED: count((c) => c.admissibility === 'REJECTED'),
      });
    });
  });

  describe('subject and evidence', () => {
    it('omits subject members the claim does not supply', async () => {
      const claim = validClaim();
      delete claim.action;
      const res = await evaluate(claim);
      expect(res.body.receipt.subject).toEqual({ entity: 'acme/web' });
      expect((await ledgerState(t)).stats).toMatchObject({ agents: [], repositories: [] });
    });

    it.each([
      ['a number', 7, 7],
      ['a string of digits', '42', 42],
      ['another string', 'feature-7', 'feature-7'],
    ])('pull_request given as %s', async (_name, given, expected) => {
      const res = await evaluate(
        validClaim({
          action: {
            action_type: 'merge',
            target_system: 'github',
            pull_request: given,
            environment: 'staging',
          },
        }),
      );
      expect(res.body.receipt.subject).toEqual({
        entity: 'acme/web',
        pull_request: expected,
        action_type: 'merge',
        target_system: 'github',
        environment: 'staging',
      });
      // The claim is echoed as sent; only the receipt's subject normalizes.
      expect(res.body.claim.action.pull_request).toBe(given);
    });

    it('source_types are sorted and de-duplicated; source_count counts every source', async () => {
      const res = await evaluate(
        validClaim({
          sources: [
            source({ type: 'scm' }),
            source({ type: 'ci' }),
            source({ type: 'scm' }),
            source({ type: 'agent_trace' }),
          ],
        }),
      );
      expect(res.body.receipt.evidence).toMatchObject({
        source_count: 4,
        source_types: ['agent_trace', 'ci', 'scm'],
      });
    });

    it('inputs_hash commits to the claim as sent, with no defaults filled in', async () => {
      const minimal = {
        claim_id: 'minimal-1',
        entity: 'svc',
        claim: 'c',
        sources: [{ id: 's', type: 'manual', uri: 'urn:x:1', confidence: 1, content: '' }],
      };
      const res = await evaluate(minimal);
      expect(res.status).toBe(200);
      expect(res.body.claim).toEqual(minimal);
      expect(res.body.receipt.evidence.inputs_hash).toBe(H(minimal));
      expect(res.body.policy.config).toEqual(DEFAULT_CONFIG);
    });
  });

  describe('idempotency', () => {
    it('the same claim_id with the same content answers the stored receipt, Idempotent-Replay: true', async () => {
      const claim = validClaim();
      const first = await evaluate(claim);
      const before = await ledgerState(t);
      t.clock.advance(10 * 60 * 1000);
      const again = await evaluate(claim);
      expect(again.status).toBe(200);
      expect(again.headers['idempotent-replay']).toBe('true');
      expect(again.body).toEqual(first.body);
      expect(again.body.receipt.issued_at).toBe(first.body.receipt.issued_at);
      expect(await ledgerState(t)).toEqual(before);
    });

    it('key order and number spelling do not make different content', async () => {
      const claim = validClaim({ sources: [source({ confidence: 0.5 })] });
      const first = await evaluate(claim);
      const text = JSON.stringify(Object.fromEntries(Object.entries(claim).reverse())).replace(
        '"confidence":0.5',
        '"confidence":5e-1',
      );
      expect(text).toContain('5e-1');
      const again = await postRaw(t, '/v1/evaluate', key, text);
      expect(again.status).toBe(200);
      expect(again.headers['idempotent-replay']).toBe('true');
      expect(again.body.receipt).toEqual(first.body.receipt);
      expect((await ledgerState(t)).head.sequence).toBe(1);
    });

    it('the same claim_id with different content is 409 claim_conflict and writes nothing', async () => {
      const claim = validClaim();
      const first = await evaluate(claim);
      const before = await ledgerState(t);
      for (const changed of [
        { ...claim, claim: 'Something else' },
        { ...claim, policyConfig: { minSources: 1 } },
        { ...claim, expected_replay_match: true },
      ]) {
        const res = await evaluate(changed);
        expect(expectError(res, 409, 'claim_conflict')).toBe(
          `claim_id ${JSON.stringify(claim.claim_id)} was already evaluated with different inputs (receipt ${first.body.receipt.receipt_id})`,
        );
        expect(res.headers['idempotent-replay']).toBeUndefined();
      }
      expect(await ledgerState(t)).toEqual(before);
    });
  });

  it('accepts Authorization: Bearer', async () => {
    const res = await request(t.app)
      .post('/v1/evaluate')
      .set('Authorization', `Bearer ${key}`)
      .send(validClaim());
    expect(res.status).toBe(200);
  });

  it('accepts the limits exactly: 256 sources, 256 risk_scope items, 64 KiB strings', async () => {
    const sources = Array.from({ length: 256 }, (_, i) => source({ id: `s-${i}` }));
    const res = await evaluate(
      validClaim({
        claim: 'x'.repeat(64 * 1024),
        sources,
        action: {
          action_type: 'code_change',
          target_system: 'github',
          risk_scope: Array.from({ length: 256 }, (_, i) => `area-${i}`),
        },
      }),
    );
    expect(res.status).toBe(200);
    expect(res.body.receipt.evidence.source_count).toBe(256);
    expect(res.body.policy.verdict).toBe('ESCALATED');
  });

  it('accepts a body of exactly 1 MiB', async () => {
    const text = JSON.stringify(validClaim());
    const body = text + ' '.repeat(1024 * 1024 - Buffer.byteLength(text));
    expect(Buffer.byteLength(body)).toBe(1024 * 1024);
    const res = await postRaw(t, '/v1/evaluate', key, body);
    expect(res.status).toBe(200);
    const over = await postRaw(t, '/v1/evaluate', key, body + ' ');
    expectError(over, 413, 'payload_too_large');
    expect((await ledgerState(t)).head.sequence).toBe(1);
  });
});

function sortedJson(value: Json): string {
  // What RFC 8785 gives for a receipt core (strings, booleans, small integers): sorted keys,
  // no white space.
  const sort = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sort)
      : v !== null && typeof v === 'object'
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((k) => [k, sort((v as Json)[k])]),
          )
        : v;
  return JSON.stringify(sort(value));
}

import { gzipSync } from 'node:zlib';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { buildTestApp, type TestApp } from '../../support/harness.js';
import {
  expectError,
  type Json,
  ledgerState,
  newKey,
  postRaw,
  type Res,
} from '../../support/api.js';
import { validClaim } from '../../support/claims.js';

let t: TestApp;
let key: string;
let stored: Json;

beforeAll(async () => {
  t = buildTestApp();
  key = await newKey(t, 'enterprise');
  stored = validClaim({ claim_id: 'already-evaluated' });
  const res = await request(t.app).post('/v1/evaluate').set('X-API-Key', key).send(stored);
  expect(res.status).toBe(200);
});
afterAll(() => t.close());

/** A clear 4xx in the error envelope, and the ledger exactly as it was. */
async function rejects(
  send: () => Promise<Res>,
  status: number,
  code: string,
  message?: string | RegExp,
): Promise<string> {
  const before = await ledgerState(t);
  expect(before.head.sequence).toBe(1);
  const res = await send();
  const error = expectError(res, status, code);
  if (typeof message === 'string') expect(error).toBe(message);
  else if (message) expect(error).toMatch(message);
  expect(await ledgerState(t)).toEqual(before);
  return error;
}

const claimText = (overrides: Json = {}) => JSON.stringify(validClaim(overrides));
const source = (overrides: Json = {}) => ({
  id: 's',
  type: 'ci',
  uri: 'https://ci.example/1',
  confidence: 0.9,
  content: 'ok',
  ...overrides,
});
const without = (path: string[]): Json => {
  const claim = validClaim();
  let at: Json = claim;
  for (const part of path.slice(0, -1)) at = at[part] as Json;
  delete at[path[path.length - 1]!];
  return claim;
};
const deep = (levels: number) => '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);

describe.each(['/v1/evaluate', '/v1/simulate'])('POST %s refuses bad input', (path) => {
  const send = (body: unknown) => () =>
    request(t.app)
      .post(path)
      .set('X-API-Key', key)
      .send(body as object);
  const raw = (text: string | Buffer) => () => postRaw(t, path, key, text);

  describe('wrong types', () => {
    it.each([
      ['claim_id', { claim_id: 42 }, 'claim_id: Invalid input: expected string, received number'],
      ['entity', { entity: true }, 'entity: Invalid input: expected string, received boolean'],
      ['claim', { claim: null }, 'claim: Invalid input: expected string, received null'],
      [
        'sources (object)',
        { sources: {} },
        'sources: Invalid input: expected array, received object',
      ],
      [
        'sources (string)',
        { sources: 'ci' },
        'sources: Invalid input: expected array, received string',
      ],
      [
        'confidence',
        { sources: [source({ confidence: '0.9' })] },
        'sources.0.confidence: Invalid input: expected number, received string',
      ],
      [
        'expected_replay_match',
        { expected_replay_match: 'yes' },
        'expected_replay_match: Invalid input: expected boolean, received string',
      ],
      ['action', { action: [] }, 'action: Invalid input: expected object, received array'],
      [
        'action.risk_scope',
        { action: { action_type: 'merge', target_system: 'x', risk_scope: 'db' } },
        'action.risk_scope: Invalid input: expected array, received string',
      ],
      [
        'action.pull_request (negative)',
        { action: { action_type: 'merge', target_system: 'x', pull_request: -1 } },
        /^action\.pull_request: /,
      ],
      [
        'decision_rights',
        { decision_rights: { principal: 'a' } },
        'decision_rights: Invalid input: expected array, received object',
      ],
      [
        'policyConfig.minSources (fraction)',
        { policyConfig: { minSources: 1.5 } },
        'policyConfig.minSources: Invalid input: expected int, received number',
      ],
      [
        'policyConfig.requireReplay',
        { policyConfig: { requireReplay: 'true' } },
        'policyConfig.requireReplay: Invalid input: expected boolean, received string',
      ],
      [
        'policyConfig.minConfidence (above 1)',
        { policyConfig: { minConfidence: 2 } },
        'policyConfig.minConfidence: Too big: expected number to be <=1',
      ],
      [
        'source admissibility state',
        { sources: [source({ admissibility: { state: 'MAYBE' } })] },
        /^sources\.0\.admissibility\.state: Invalid option/,
      ],
    ])('%s', async (_name, overrides, message) => {
      await rejects(send(validClaim(overrides)), 400, 'validation_failed', message);
    });

    it.each([
      ['an array', '[]', 'array'],
      ['a string', '"claim"', 'string'],
      ['a number', '1', 'number'],
      ['null', 'null', 'null'],
    ])('a body that is %s', async (_name, text, type) => {
      await rejects(
        raw(text),
        400,
        'validation_failed',
        `(root): Invalid input: expected object, received ${type}`,
      );
    });

    it('an empty body', async () => {
      await rejects(
        () => request(t.app).post(path).set('X-API-Key', key),
        400,
        'validation_failed',
        '(root): Invalid input: expected object, received undefined',
      );
    });
  });

  describe('missing fields: the message names the field', () => {
    it.each([
      [['claim_id'], 'claim_id', 'string'],
      [['entity'], 'entity', 'string'],
      [['claim'], 'claim', 'string'],
      [['sources'], 'sources', 'array'],
      [['sources', '0', 'id'], 'sources.0.id', 'string'],
      [['sources', '0', 'type'], 'sources.0.type', null],
      [['sources', '0', 'uri'], 'sources.0.uri', 'string'],
      [['sources', '1', 'confidence'], 'sources.1.confidence', 'number'],
      [['sources', '0', 'content'], 'sources.0.content', 'string'],
      [['action', 'action_type'], 'action.action_type', null],
      [['action', 'target_system'], 'action.target_system', 'string'],
    ])('%j', async (path, field, type) => {
      const error = await rejects(send(without(path)), 400, 'validation_failed');
      expect(error.startsWith(`${field}: `)).toBe(true);
      if (type) expect(error).toBe(`${field}: Invalid input: expected ${type}, received undefined`);
    });

    it('provenance without captured_at', async () => {
      const claim = validClaim({ sources: [source({ provenance: { collector: 'ci' } })] });
      await rejects(
        send(claim),
        400,
        'validation_failed',
        /^sources\.0\.provenance\.captured_at: /,
      );
    });

    it('a decision right without its members', async () => {
      await rejects(
        send(validClaim({ decision_rights: [{ principal: 'alice' }] })),
        400,
        'validation_failed',
        'decision_rights.0.role: Invalid input: expected string, received undefined; decision_rights.0.permission: Invalid input: expected string, received undefined',
      );
    });

    it('several problems are all named', async () => {
      const claim = without(['claim_id']);
      (claim.sources as Json[])[1]!.confidence = 1.5;
      await rejects(
        send(claim),
        400,
        'validation_failed',
        'claim_id: Invalid input: expected string, received undefined; sources.1.confidence: Too big: expected number to be <=1',
      );
    });
  });

  describe('values out of range', () => {
    it.each([
      ['empty sources', { sources: [] }, 'sources: must hold at least 1 evidence source'],
      [
        '257 sources',
        { sources: Array.from({ length: 257 }, (_, i) => source({ id: `s${i}` })) },
        'sources: must hold at most 256 evidence sources',
      ],
      [
        '257 risk_scope items',
        {
          action: {
            action_type: 'infra_change',
            target_system: 'aws',
            risk_scope: Array.from({ length: 257 }, (_, i) => `r${i}`),
          },
        },
        'action.risk_scope: Too big: expected array to have <=256 items',
      ],
      [
        '257 decision_rights',
        {
          decision_rights: Array.from({ length: 257 }, () => ({
            principal: 'p',
            role: 'r',
            permission: 'w',
          })),
        },
        'decision_rights: Too big: expected array to have <=256 items',
      ],
      [
        'confidence 1.5',
        { sources: [source({ confidence: 1.5 })] },
        'sources.0.confidence: Too big: expected number to be <=1',
      ],
      [
        'confidence -0.1',
        { sources: [source({ confidence: -0.1 })] },
        'sources.0.confidence: Too small: expected number to be >=0',
      ],
      [
        'an unknown action_type',
        { action: { action_type: 'launch', target_system: 'x' } },
        /^action\.action_type: Invalid option: expected one of "code_change"\|/,
      ],
      [
        'an unknown source type',
        { sources: [source({ type: 'rumour' })] },
        /^sources\.0\.type: Invalid option: expected one of "scm"\|/,
      ],
      ['an empty claim_id', { claim_id: '' }, 'claim_id: must not be empty'],
      [
        'a uri without a scheme',
        { sources: [source({ uri: 'ci.example/1' })] },
        'sources.0.uri: must be a URI with a scheme',
      ],
      [
        'a captured_at that is not a timestamp',
        { sources: [source({ provenance: { captured_at: 'yesterday' } })] },
        'sources.0.provenance.captured_at: must be an ISO 8601 UTC timestamp',
      ],
      [
        'a 70 KiB claim string',
        { claim: 'x'.repeat(70 * 1024) },
        'claim: Too big: expected string to have <=65536 characters',
      ],
      [
        'a 70 KiB source content',
        { sources: [source({ content: 'y'.repeat(70 * 1024) })] },
        'sources.0.content: Too big: expected string to have <=65536 characters',
      ],
    ])('%s', async (_name, overrides, message) => {
      await rejects(send(validClaim(overrides)), 400, 'validation_failed', message);
    });
  });

  describe('unknown members', () => {
    it.each([
      ['at the root', { extra: 1 }, '(root): Unrecognized key: "extra"'],
      [
        'in action',
        { action: { action_type: 'merge', target_system: 'x', owner: 'me' } },
        'action: Unrecognized key: "owner"',
      ],
      [
        'in a source',
        { sources: [source({ weight: 2 })] },
        'sources.0: Unrecognized key: "weight"',
      ],
      [
        'in policyConfig',
        { policyConfig: { minSources: 1, allowAll: true } },
        'policyConfig: Unrecognized key: "allowAll"',
      ],
      [
        'in provenance',
        { sources: [source({ provenance: { captured_at: '2026-01-01T00:00:00Z', by: 'x' } })] },
        'sources.0.provenance: Unrecognized key: "by"',
      ],
    ])('%s', async (_name, overrides, message) => {
      await rejects(send(validClaim(overrides)), 400, 'validation_failed', message);
    });
  });

  describe('JSON the contract refuses to read', () => {
    it('a 1 MiB string is 413', async () => {
      await rejects(
        send(validClaim({ claim: 'x'.repeat(1024 * 1024) })),
        413,
        'payload_too_large',
        'Request body exceeds 1 MiB',
      );
    });

    it('a gzip body over 1 MiB once inflated is 413', async () => {
      const body = gzipSync(claimText({ claim: 'z'.repeat(2 * 1024 * 1024) }));
      expect(body.length).toBeLessThan(64 * 1024);
      await rejects(
        () =>
          request(t.app)
            .post(path)
            .set('X-API-Key', key)
            .set('Content-Type', 'application/json')
            .set('Content-Encoding', 'gzip')
            .serialize((data: unknown) => data as string)
            .send(body as unknown as string),
        413,
        'payload_too_large',
      );
    });

    it('an unknown Content-Encoding is 400', async () => {
      await rejects(
        () =>
          request(t.app)
            .post(path)
            .set('X-API-Key', key)
            .set('Content-Type', 'application/json')
            .set('Content-Encoding', 'x-custom')
            .send(claimText()),
        400,
        'validation_failed',
        'Unsupported content encoding or charset',
      );
    });

    it.each([
      ['33 levels', deep(32)],
      ['100,000 levels', '['.repeat(100_000) + ']'.repeat(100_000)],
    ])('nesting of %s', async (_name, nested) => {
      const text = claimText().replace(/^\{/, `{"policyConfig":${nested},`);
      await rejects(raw(text), 400, 'validation_failed', /nesting deeper than 32 levels$/);
    });

    it.each([
      [
        '__proto__ at the root',
        (s: string) => s.replace(/^\{/, '{"__proto__":{"admin":true},'),
        '(root): key "__proto__" is not allowed',
      ],
      [
        '__proto__ in action',
        (s: string) => s.replace('"action":{', '"action":{"__proto__":{},'),
        'action: key "__proto__" is not allowed',
      ],
      [
        'constructor at the root',
        (s: string) => s.replace(/^\{/, '{"constructor":{"prototype":{}},'),
        '(root): key "constructor" is not allowed',
      ],
      [
        'constructor in a source',
        (s: string) => s.replace('"id":"ci-1"', '"constructor":1,"id":"ci-1"'),
        'sources.0: key "constructor" is not allowed',
      ],
      [
        'prototype in policyConfig',
        (s: string) => s.replace(/^\{/, '{"policyConfig":{"prototype":{}},'),
        'policyConfig: key "prototype" is not allowed',
      ],
    ])('%s', async (_name, edit, message) => {
      const text = edit(claimText());
      expect(text).not.toBe(claimText());
      await rejects(raw(text), 400, 'validation_failed', message);
    });

    it.each([
      [
        '1e400 confidence',
        '"confidence":0.9',
        '"confidence":1e400',
        'sources.0.confidence: number out of range',
      ],
      [
        '-1e400 confidence',
        '"confidence":0.9',
        '"confidence":-1e400',
        'sources.0.confidence: number out of range',
      ],
      [
        'the unsafe integer 9007199254740993',
        '"pull_request":42',
        '"pull_request":9007199254740993',
        'action.pull_request: integer outside the exactly representable range ±(2^53-1)',
      ],
      [
        'the unsafe integer 1e16',
        '"pull_request":42',
        '"pull_request":1e16',
        'action.pull_request: integer outside the exactly representable range ±(2^53-1)',
      ],
      [
        'a lone surrogate in a string',
        '"claim":"',
        '"claim":"\\ud800',
        'claim: lone UTF-16 surrogate',
      ],
      [
        'a lone surrogate in a key',
        '"claim":"',
        '"\\udc00":1,"claim":"',
        '(root): lone UTF-16 surrogate in a key',
      ],
      [
        'a duplicate key at the root',
        '"entity":',
        '"claim_id":"again","entity":',
        '(root): duplicate key "claim_id"',
      ],
      [
        'a duplicate key in a source',
        '"type":"ci"',
        '"type":"ci","type":"manual"',
        'sources.0: duplicate key "type"',
      ],
    ])('%s', async (_name, from, to, message) => {
      const text = claimText().replace(from, to);
      expect(text).toContain(to);
      await rejects(raw(text), 400, 'validation_failed', message);
    });

    it.each([
      ['an unterminated object', '{"claim_id":"a"'],
      ['a trailing comma', '{"claim_id":"a",}'],
      ['single quotes', "{'claim_id':'a'}"],
      ['NaN', '{"claim_id":NaN}'],
      ['two documents', '{}{}'],
      ['a bare word', 'claim'],
    ])('malformed JSON: %s', async (_name, text) => {
      await rejects(raw(text), 400, 'malformed_json', /^Request body is not valid JSON: /);
    });

    it('bytes that are not UTF-8', async () => {
      const bytes = Buffer.concat([
        Buffer.from(claimText().slice(0, -1) + ',"x":"'),
        Buffer.from([0xc3, 0x28]),
        Buffer.from('"}'),
      ]);
      await rejects(raw(bytes), 400, 'malformed_json', 'Request body is not valid UTF-8 JSON');
    });
  });

  describe('authentication', () => {
    it.each([
      [
        'Authorization: Basic',
        { Authorization: 'Basic YTpi' },
        'Authorization must be "Bearer <API key>"',
      ],
      [
        'an invalid key',
        { 'X-API-Key': 'sk_svc_00000000-0000-0000-0000-000000000000' },
        'Invalid API key',
      ],
    ])('%s is 401', async (_name, headers, message) => {
      await rejects(
        () => request(t.app).post(path).set(headers).send(validClaim()),
        401,
        'unauthorized',
        message,
      );
    });

    it('no key is 401', async () => {
      await rejects(() => request(t.app).post(path).send(validClaim()), 401, 'unauthorized');
    });
  });
});

describe('POST /v1/evaluate with a reused claim_id', () => {
  it('different content is 409 claim_conflict', async () => {
    await rejects(
      () =>
        request(t.app)
          .post('/v1/evaluate')
          .set('X-API-Key', key)
          .send({ ...stored, entity: 'acme/other' }),
      409,
      'claim_conflict',
      /^claim_id "already-evaluated" was already evaluated with different inputs \(receipt dr-/,
    );
  });

  it('the same content is no error and writes nothing', async () => {
    const before = await ledgerState(t);
    const res = await request(t.app).post('/v1/evaluate').set('X-API-Key', key).send(stored);
    expect(res.status).toBe(200);
    expect(res.headers['idempotent-replay']).toBe('true');
    expect(await ledgerState(t)).toEqual(before);
  });
});

// The key and policy routes: each bad input refused with a clear 4xx that changes nothing.
describe('bad input on the key and policy routes', () => {
  let t: TestApp;
  let key: string;
  beforeEach(async () => {
    t = buildTestApp();
    key = await newKey(t);
  });
  afterEach(() => t.close());

  it.each(['Bad%20Name', 'UPPER', '-starts-with-dash', 'x'.repeat(65)])(
    'GET and DELETE /v1/policies/%s: 400 validation_failed naming the parameter',
    async (name) => {
      const before = await ledgerState(t);
      const read = await request(t.app).get(`/v1/policies/${name}`);
      expect(expectError(read, 400, 'validation_failed')).toMatch(/^name: /);
      const removed = await request(t.app).delete(`/v1/policies/${name}`).set('X-API-Key', key);
      expect(expectError(removed, 400, 'validation_failed')).toMatch(/^name: /);
      expect(await ledgerState(t)).toEqual(before);
    },
  );

  it.each([
    [{ name: 'p', config: {}, overrides: 'loosen' }, /^overrides: /],
    [{ name: 'p', config: { minSources: -1 } }, /^config\.minSources: /],
    [{ name: 'p', config: {}, owner: 'someone-else' }, /"owner"/],
  ])('POST /v1/policies %j: 400 validation_failed, nothing created', async (body, message) => {
    const res = await request(t.app).post('/v1/policies').set('X-API-Key', key).send(body);
    expect(expectError(res, 400, 'validation_failed')).toMatch(message);
    const list = await request(t.app).get('/v1/policies').set('X-API-Key', key);
    expect(list.body.policies.map((p: { name: string }) => p.name)).toEqual([
      'default',
      'strict',
      'permissive',
      'agent',
    ]);
  });

  it('POST /v1/account/rotate with a non-JSON body is 415, and the key keeps working', async () => {
    const res = await request(t.app)
      .post('/v1/account/rotate')
      .set('X-API-Key', key)
      .set('Content-Type', 'text/plain')
      .send('rotate please');
    expectError(res, 415, 'unsupported_media_type');
    expect((await request(t.app).get('/v1/account').set('X-API-Key', key)).status).toBe(200);
  });

  it('rotate and revoke without a key are 401, and revoke of a revoked key is 401', async () => {
    expectError(await request(t.app).post('/v1/account/rotate'), 401, 'unauthorized');
    expectError(await request(t.app).delete('/v1/account'), 401, 'unauthorized');
    expect((await request(t.app).delete('/v1/account').set('X-API-Key', key)).status).toBe(200);
    expectError(
      await request(t.app).delete('/v1/account').set('X-API-Key', key),
      401,
      'unauthorized',
    );
  });
});

import { createHash, generateKeyPairSync, sign, verify } from 'node:crypto';
import * as ed from '@noble/ed25519';
import { sha256 } from '@noble/hashes/sha2.js';
import { nativeSha256Hex } from '@svc/verify/node';
import {
  canonicalBytes,
  canonicalize,
  hashCanonical,
  parseStrictJson,
  receiptHash,
  verifyEd25519Strict,
  verifyReceipt,
} from '@svc/verify';
import { claimInputSchema } from '../src/core/claim-schema.js';
// Imported for its side effect too: it sets the SHA-512 noble's synchronous API needs.
import { evaluateClaim } from '../src/core/evaluation.js';
import { builtinPolicy } from '../src/core/policies.js';
import { evaluatePolicy } from '../src/core/policy.js';
import { resolvePolicy } from '../src/core/policy-config.js';
import { buildReceiptCore, chainReceipt, signedMessage, signReceipt } from '../src/core/receipt.js';
import { serverKeyFrom } from '../src/secrets/server-key.js';
import { toolCallClaim } from './agent-requests.js';
import { benchClaim } from './claims.js';

export interface MicroResult {
  name: string;
  group: string;
  ops_per_s: number;
  us_per_op: number;
  /** Size of the input in bytes, where one is meaningful. */
  bytes?: number;
}

// Results land here so the optimizer cannot drop a call whose value is unused.
let sink: unknown;

function measure(fn: () => unknown, seconds: number): { ops: number; us: number } {
  const warmupEnd = performance.now() + Math.min(200, seconds * 200);
  while (performance.now() < warmupEnd) sink = fn();
  let n = 0;
  let batch = 1;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  let now = started;
  // Batches keep the clock out of the measured loop for fast functions.
  while (now < deadline) {
    for (let i = 0; i < batch; i++) sink = fn();
    n += batch;
    now = performance.now();
    if (now - started < 10) batch *= 2;
  }
  const elapsed = (now - started) / 1000;
  return { ops: n / elapsed, us: (elapsed * 1e6) / n };
}

/** In-process microbenchmarks of the evaluate and verify hot path, each for `seconds`. */
export function runMicro(seconds: number): MicroResult[] {
  const claim = benchClaim(0, 'micro-claim-0000000001');
  const body = JSON.stringify(claim);
  const evaluation = evaluateClaim(claim, resolvePolicy(claim.policyConfig));
  const core = buildReceiptCore({
    receiptId: 'dr-01J0000000000000000000000Z',
    issuedAt: '2026-01-15T10:00:00.000Z',
    claim,
    evaluation,
  });
  const message = signedMessage(core);

  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const serverKey = serverKeyFrom(privateKey);
  const seed = new Uint8Array(privateKey.export({ format: 'der', type: 'pkcs8' }).subarray(-32));
  const raw = serverKey.publicKeyRaw;
  const nodeSignature = sign(null, message, privateKey);
  const nobleSignature = ed.sign(message, seed);
  if (!Buffer.from(nobleSignature).equals(nodeSignature)) {
    throw new Error('noble and node:crypto signatures differ for the same key and message');
  }
  const signed = signReceipt(core, serverKey);
  const chained = chainReceipt(signed, { sequence: 0, receipt_hash: null });
  const claimBytes = canonicalBytes(claim);
  const agent = builtinPolicy('agent')!.config;
  const toolCalls = Array.from({ length: 6 }, (_, i) =>
    claimInputSchema.parse(toolCallClaim(0, i, 'micro-')),
  );
  let turn = 0;
  const nextToolCall = () => toolCalls[turn++ % toolCalls.length]!;

  const cases: [group: string, name: string, fn: () => unknown, bytes?: number][] = [
    ['request', 'parseStrictJson(claim body)', () => parseStrictJson(body), body.length],
    ['request', 'claimInputSchema.parse(claim)', () => claimInputSchema.parse(claim)],
    ['canonical', 'canonicalize(claim)', () => canonicalize(claim), claimBytes.length],
    ['canonical', 'canonicalize(receipt core)', () => canonicalize(core), message.length],
    ['hash', 'hashCanonical(claim) (JCS + noble sha256)', () => hashCanonical(claim)],
    ['hash', 'sha256 @noble/hashes', () => sha256(claimBytes), claimBytes.length],
    [
      'hash',
      'sha256 node:crypto',
      () => createHash('sha256').update(claimBytes).digest(),
      claimBytes.length,
    ],
    ['ed25519', 'sign node:crypto', () => sign(null, message, privateKey), message.length],
    ['ed25519', 'sign @noble/ed25519', () => ed.sign(message, seed), message.length],
    [
      'ed25519',
      'verify node:crypto',
      () => verify(null, message, publicKey, nodeSignature),
      message.length,
    ],
    [
      'ed25519',
      'verify @noble/ed25519 (strict)',
      () => verifyEd25519Strict(nobleSignature, message, raw),
      message.length,
    ],
    [
      'ed25519',
      'verify svc native strict (ServerKey.verify)',
      () => serverKey.verify(nobleSignature, message, raw),
      message.length,
    ],
    ['pipeline', 'evaluateClaim', () => evaluateClaim(claim, resolvePolicy(claim.policyConfig))],
    // A coding agent's tool calls under the built-in agent policy (its command, path and URL
    // rules), one of each kind the hook scenarios send, in turn.
    ['rules', 'evaluatePolicy(tool call, agent)', () => evaluatePolicy(nextToolCall(), agent)],
    [
      'rules',
      'evaluateClaim(tool call, agent) (node:crypto sha256, as the service)',
      () => evaluateClaim(nextToolCall(), agent, nativeSha256Hex),
    ],
    [
      'pipeline',
      'evaluate + build + sign + receiptHash',
      () => {
        const e = evaluateClaim(claim, resolvePolicy(claim.policyConfig));
        const c = buildReceiptCore({
          receiptId: 'dr-01J0000000000000000000000Z',
          issuedAt: '2026-01-15T10:00:00.000Z',
          claim,
          evaluation: e,
        });
        const s = signReceipt(c, serverKey);
        return receiptHash(s);
      },
    ],
    ['pipeline', 'receiptHash(signed receipt)', () => receiptHash(signed)],
    [
      'pipeline',
      'verifyReceipt (native strict, ledger hash given)',
      () =>
        verifyReceipt(chained, {
          publicKey: raw,
          keyId: serverKey.keyId,
          verifySignature: serverKey.verify,
          ledgerHash: chained.chain.receipt_hash,
        }),
    ],
  ];

  const results = cases.map(([group, name, fn, bytes]) => {
    const { ops, us } = measure(fn, seconds);
    return {
      name,
      group,
      ops_per_s: Math.round(ops),
      us_per_op: Number(us.toFixed(2)),
      ...(bytes === undefined ? {} : { bytes }),
    };
  });
  if (sink === Symbol.for('never')) throw new Error('unreachable');
  return results;
}

import type { HashBytes, Sha256Hex } from '@svc/verify';
import type { LedgerStore } from '../../ports/ledger-store.js';
import type { ServerKey } from '../../ports/signer.js';
import type { SigningKeyService } from '../../services/signing-keys.js';
import { verifyAgainstLedger, type InclusionSource } from '../../services/verification.js';
import { defineRoute, type RouteDef } from '../route-table.js';
import { textSchema } from '../schemas/system.js';
import {
  isReceiptWithProof,
  keyHistoryResponseSchema,
  serverKeyHeaders,
  verifyQuerySchema,
  verifyRequestSchema,
  verifyResponseSchema,
} from '../schemas/verify.js';

export function verifyRoutes(deps: {
  ledger: LedgerStore;
  serverKey: ServerKey;
  logOrigin: string;
  sha256Hex?: Sha256Hex;
  hashBytes?: HashBytes;
  keys?: SigningKeyService;
  log?: InclusionSource;
}): RouteDef[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/verify',
      operationId: 'verifyReceipt',
      tag: 'Verification',
      summary: 'Check a receipt: structure, signature and ledger hash',
      description:
        'Issuer-operated and convenient, not independent: check signatures offline against a key whose fingerprint you obtained separately. Any JSON object is checked (problems are FAIL checks); a body that is not an object is 400. A member beside the signed core other than attestations and chain fails no_unsigned_members. valid means authentic, not a go-ahead: read policy.verdict and admissibility.status. For receipt-core-v2, chain_linkage checks the signed position against the chain and the ledger, the signed submitter, policy and position are reported under "signed", and expect_policy, expect_config_hash and expect_submitter make policy_binding PASS or FAIL (SKIPPED without them). The inclusion check (ledger layer) proves the receipt is leaf chain.sequence - 1 of a checkpoint signed by a key of the ledger\'s key history: with the proof given as {receipt, proof} (an answer of GET /v1/receipts/{id}/proof), else with one the ledger makes from its newest checkpoint. A proof of the wrong shape (types, not base64, more than 64 hashes) is 400; one that does not verify is an inclusion FAIL.',
      access: 'public',
      // Anything that is an object gets the layered checks (a broken receipt is a FAIL, not a 400).
      query: verifyQuerySchema,
      body: verifyRequestSchema,
      response: {
        status: 200,
        description: 'The checks of the three layers.',
        schema: verifyResponseSchema,
      },
      handle: ({ body, query }) => {
        const { receipt, proof } = isReceiptWithProof(body)
          ? body
          : { receipt: body, proof: undefined };
        return verifyAgainstLedger(
          receipt,
          deps,
          {
            policy: query.expect_policy,
            configHash: query.expect_config_hash,
            submitter: query.expect_submitter,
          },
          proof,
        );
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/keys/server',
      operationId: 'getServerKey',
      tag: 'Verification',
      summary: 'The Ed25519 public key, SPKI PEM',
      description:
        'Header X-Svc-Key-Id carries the key fingerprint (attestations[].key_id). A key fetched from the service proves nothing about who holds it: compare the fingerprint with one obtained through a trusted channel.',
      access: 'public',
      response: {
        status: 200,
        description: 'PEM text.',
        text: textSchema,
        contentType: 'text/plain',
      },
      headers: { 200: serverKeyHeaders },
      handle({ res }) {
        res.setHeader('X-Svc-Key-Id', deps.serverKey.keyId);
        res.type('text/plain').send(deps.serverKey.publicKeyPem);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/v1/keys',
      operationId: 'listSigningKeys',
      tag: 'Verification',
      summary: 'Every signing key of the ledger, with its sequences and transition',
      description:
        'The signing-key history (contract §9): each key with the sequences it signed, its status (current, retired, revoked) and the key transition statement, signed by the key before it, that introduced it. A relying party that pinned an earlier key follows the signed transitions to trust a later one (svc-verify --fingerprint <old key> --key-url <base URL>).',
      access: 'public',
      response: {
        status: 200,
        description: 'The history, oldest key first.',
        schema: keyHistoryResponseSchema,
      },
      handle: async () => ({
        origin: deps.logOrigin,
        keys: deps.keys ? await deps.keys.list() : [],
      }),
    }),
  ];
}

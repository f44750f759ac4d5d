import type { LedgerStore } from '../../ports/ledger-store.js';
import type { ServerKey } from '../../ports/signer.js';
import { verifyAgainstLedger } from '../../services/verification.js';
import { defineRoute, type RouteDef } from '../route-table.js';
import { textSchema } from '../schemas/system.js';
import { verifyRequestSchema, verifyResponseSchema } from '../schemas/verify.js';

export function verifyRoutes(deps: { ledger: LedgerStore; serverKey: ServerKey }): RouteDef[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/verify',
      operationId: 'verifyReceipt',
      tag: 'Verification',
      summary: 'Check a receipt: structure, signature and ledger hash',
      description:
        'Issuer-operated and convenient, not independent: check signatures offline against a key whose fingerprint you obtained separately. Any JSON object is checked (problems are FAIL checks); a body that is not an object is 400.',
      access: 'public',
      // Anything that is an object gets the layered checks (a broken receipt is a FAIL, not a 400).
      body: verifyRequestSchema,
      response: {
        status: 200,
        description: 'The checks of the three layers.',
        schema: verifyResponseSchema,
      },
      handle: ({ body }) => verifyAgainstLedger(body, deps),
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
      handle({ res }) {
        res.setHeader('X-Svc-Key-Id', deps.serverKey.keyId);
        res.type('text/plain').send(deps.serverKey.publicKeyPem);
      },
    }),
  ];
}

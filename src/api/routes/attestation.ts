import { signAttestation, vsaStatement } from '../../core/attestation.js';
import type { ReceiptSigner } from '../../core/receipt.js';
import type { LedgerReadService } from '../../services/ledger-reads.js';
import { readScopeOf } from '../read-scope.js';
import { defineRoute, type RouteDef } from '../route-table.js';
import { dsseEnvelopeSchema } from '../schemas/attestation.js';
import { receiptParams } from '../schemas/ledger.js';

export function attestationRoutes(deps: {
  reads: LedgerReadService;
  signer: ReceiptSigner;
  baseUrl: string;
  publicReads: boolean;
}): RouteDef[] {
  return [
    defineRoute({
      method: 'get',
      path: '/v1/receipts/:id/attestation',
      operationId: 'getReceiptAttestation',
      tag: 'Verification',
      summary: 'The receipt as an in-toto attestation (a DSSE envelope, SLSA VSA v1)',
      description:
        "A DSSE envelope whose payload is an in-toto Statement v1 with the SLSA Verification Summary predicate v1 (contract §14): verificationResult PASSED exactly when the receipt says proceed, the receipt as the input attestation, the commit (or the receipt) as the subject. Signed with Ed25519 over DSSE's PAE by the current key; keyid is its key_id. Read access as for the receipt.",
      access: 'read',
      params: receiptParams,
      response: { status: 200, description: 'The envelope.', schema: dsseEnvelopeSchema },
      errors: [404],
      async handle({ params, res }) {
        const { receipt } = await deps.reads.receipt(params.id, readScopeOf(res, deps.publicReads));
        return signAttestation(vsaStatement(receipt, deps.baseUrl), deps.signer);
      },
    }),
  ];
}

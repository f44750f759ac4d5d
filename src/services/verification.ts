import { verifyReceipt, type VerifyResult } from '../core/verify.js';
import type { LedgerStore } from '../ports/ledger-store.js';
import type { ServerKey } from '../ports/signer.js';

/** The issuer-operated verify of the spec: all three layers, the ledger consulted. */
export async function verifyAgainstLedger(
  receipt: unknown,
  deps: { ledger: LedgerStore; serverKey: ServerKey },
): Promise<VerifyResult> {
  const receiptId =
    typeof receipt === 'object' &&
    receipt !== null &&
    typeof (receipt as { receipt_id?: unknown }).receipt_id === 'string'
      ? (receipt as { receipt_id: string }).receipt_id
      : null;
  return verifyReceipt(receipt, {
    publicKey: deps.serverKey.publicKeyRaw,
    keyId: deps.serverKey.keyId,
    verifySignature: deps.serverKey.verify,
    ledgerHash: receiptId === null ? null : await deps.ledger.receiptHashOf(receiptId),
  });
}

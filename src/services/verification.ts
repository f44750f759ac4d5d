import type { Sha256Hex } from '../core/canonical.js';
import { verifyReceipt, type VerifyExpectations, type VerifyResult } from '../core/verify.js';
import type { LedgerStore } from '../ports/ledger-store.js';
import type { ServerKey } from '../ports/signer.js';

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The issuer-operated verify of the spec: all three layers, the ledger consulted. */
export async function verifyAgainstLedger(
  receipt: unknown,
  deps: { ledger: LedgerStore; serverKey: ServerKey; logOrigin: string; sha256Hex?: Sha256Hex },
  expect: VerifyExpectations = {},
): Promise<VerifyResult> {
  const record = isObject(receipt) ? receipt : {};
  const receiptId = typeof record.receipt_id === 'string' ? record.receipt_id : null;
  // The signed position names the previous receipt; the ledger's copy of it is what
  // chain_linkage compares with.
  const sequence = isObject(record.position) ? record.position.sequence : undefined;
  const previous =
    Number.isSafeInteger(sequence) && (sequence as number) > 1
      ? await deps.ledger.receiptHashAt((sequence as number) - 1)
      : undefined;
  return verifyReceipt(receipt, {
    publicKey: deps.serverKey.publicKeyRaw,
    keyId: deps.serverKey.keyId,
    verifySignature: deps.serverKey.verify,
    ledgerHash: receiptId === null ? null : await deps.ledger.receiptHashOf(receiptId),
    previousLedgerHash: previous,
    logOrigin: deps.logOrigin,
    sha256Hex: deps.sha256Hex,
    expect,
  });
}

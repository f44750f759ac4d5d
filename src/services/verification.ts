import type { Sha256Hex } from '../core/canonical.js';
import { attestationKeyIdsOf, keyForReceipt } from '../core/key-history.js';
import { verifyReceipt, type VerifyExpectations, type VerifyResult } from '../core/verify.js';
import type { LedgerStore } from '../ports/ledger-store.js';
import type { ServerKey } from '../ports/signer.js';
import type { HistoryKey } from './signing-keys.js';

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The key a receipt is checked against: the history key its attestation names, with a refusal
 * when that key did not sign the receipt's sequence or was revoked at or before it. Without a
 * history (a ledger the server has not registered its key in) the server's own key.
 */
function issuerKey(
  receipt: unknown,
  serverKey: ServerKey,
  history: HistoryKey[] | undefined,
  allKeyIds: string[],
): { publicKey: Uint8Array; keyId: string; keyRefusal?: string } {
  const own = { publicKey: serverKey.publicKeyRaw, keyId: serverKey.keyId };
  if (!history || allKeyIds.length === 0) return own;
  const { key, refusal } = keyForReceipt(receipt, history);
  if (key) return { publicKey: key.raw, keyId: key.keyId, keyRefusal: refusal };
  const named = attestationKeyIdsOf(receipt);
  if (named.length === 0) return own;
  const known = named.find((id) => allKeyIds.includes(id));
  return {
    ...own,
    keyRefusal: known
      ? `key ${known} is in this ledger's key history, but its public key was never recorded (adopted from receipts signed before the history existed)`
      : `signed by ${named.join(', ')}, which is not a key of this ledger's key history (GET /v1/keys)`,
  };
}

/** The issuer-operated verify of the spec: all three layers, the ledger consulted. */
export async function verifyAgainstLedger(
  receipt: unknown,
  deps: {
    ledger: LedgerStore;
    serverKey: ServerKey;
    logOrigin: string;
    sha256Hex?: Sha256Hex;
    /** The signing-key history; absent, only the server's key verifies. */
    keys?: { verificationKeys(): Promise<HistoryKey[]>; list(): Promise<{ key_id: string }[]> };
  },
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
  const all = deps.keys ? (await deps.keys.list()).map((k) => k.key_id) : [];
  const history = deps.keys ? await deps.keys.verificationKeys() : undefined;
  return verifyReceipt(receipt, {
    ...issuerKey(receipt, deps.serverKey, history, all),
    verifySignature: deps.serverKey.verify,
    ledgerHash: receiptId === null ? null : await deps.ledger.receiptHashOf(receiptId),
    previousLedgerHash: previous,
    logOrigin: deps.logOrigin,
    sha256Hex: deps.sha256Hex,
    expect,
  });
}

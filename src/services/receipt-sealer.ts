import type { Sha256Hex } from '@svc/verify';
import { sealReceiptWithText } from '../core/receipt.js';
import type { AppendResult, LedgerStore } from '../ports/ledger-store.js';
import type { ReceiptSealer, SealRequest } from '../ports/receipt-sealer.js';
import type { ServerKey } from '../ports/signer.js';

/** The sealer of the process that holds the signing key and writes the ledger. */
export class LedgerSealer implements ReceiptSealer {
  constructor(
    private readonly deps: {
      ledger: LedgerStore;
      serverKey: ServerKey;
      /** The ledger's origin, signed into every receipt's position (contract §8). */
      logOrigin: string;
      sha256Hex: Sha256Hex;
    },
  ) {}

  seal(request: SealRequest): Promise<AppendResult> {
    const signing = {
      signer: this.deps.serverKey,
      log: this.deps.logOrigin,
      sha256Hex: this.deps.sha256Hex,
    };
    const { scope, claimId, parentReceiptId, draft, claim, evaluation, apiKeyId } = request;
    // Signing happens inside the store's serialized append, at the head the receipt extends;
    // a store retrying after a conflict re-signs.
    return this.deps.ledger.append({
      scope,
      claimId,
      ...(parentReceiptId === undefined ? {} : { parentReceiptId }),
      build: (head) => {
        const sealed = sealReceiptWithText(draft, head, signing);
        return {
          entry: { receipt: sealed.receipt, claim, evaluation, apiKeyId },
          // The tree's leaf is this text: the store need not canonicalize the receipt again.
          receiptHashText: sealed.hashText,
        };
      },
    });
  }
}

/** The sealer a service was given (another process's, with several workers), else this one. */
export const sealerOf = (deps: {
  sealer?: ReceiptSealer;
  ledger: LedgerStore;
  serverKey: ServerKey;
  logOrigin: string;
  sha256Hex: Sha256Hex;
}): ReceiptSealer => deps.sealer ?? new LedgerSealer(deps);

import type { Ed25519Verify } from '@svc/verify';
import type { ReceiptSigner } from '../core/receipt.js';

/** The server's signing identity: signs receipts and verifies against its own public key. */
export interface ServerKey extends ReceiptSigner {
  readonly publicKeyRaw: Uint8Array;
  readonly publicKeyPem: string;
  /** Strict RFC 8032 verification with the same results as the core's portable verifier. */
  readonly verify: Ed25519Verify;
}

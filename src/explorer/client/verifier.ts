// The verifier the server, svc-verify and the GitHub Action run, imported here and nowhere
// else in the browser bundle: when it moves to its own package, this is the one place to
// change.
export { parseReceiptInput } from '../../core/receipt-input.js';
export {
  decisionOf,
  keyFromHistory,
  offlineInclusionEvidence,
  parseTrustedCheckpoint,
} from '../../core/offline-verify.js';
export { followServedHistory, type TrustedKey } from '../../core/key-history.js';
export { parseFingerprint, parsePublicKeyPem, type PublicKey } from '../../core/public-key.js';
export { parseInclusionProof } from '../../core/tlog/receipt-inclusion.js';
export { verifyReceipt, type VerifyResult } from '../../core/verify.js';

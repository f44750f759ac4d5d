// The verifier the server, svc-verify and the GitHub Action run (@svc/verify), imported here
// and nowhere else in the browser bundle.
export {
  decisionOf,
  followServedHistory,
  keyFromHistory,
  offlineInclusionEvidence,
  parseFingerprint,
  parseInclusionProof,
  parsePublicKeyPem,
  parseReceiptInput,
  parseTrustedCheckpoint,
  verifyReceipt,
  type ParentEvidence,
  type PublicKey,
  type TrustedKey,
  type VerifyResult,
} from '@svc/verify';

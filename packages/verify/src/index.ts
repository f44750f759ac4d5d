// @svc/verify: everything a relying party needs to check svc receipts and its transparency
// log, portable (no node: imports: Node, the GitHub Action and browsers run the same code).
// The Node-only helpers are under "@svc/verify/node"; the svc-verify CLI is src/cli/.
export * from './attestation.js';
export * from './canonical.js';
export * from './ed25519.js';
export * from './encoding.js';
export * from './errors.js';
export * from './json.js';
export * from './key-history.js';
export * from './offline-verify.js';
export * from './public-key.js';
export * from './receipt-contract.js';
export * from './receipt-input.js';
export * from './strict-json.js';
export * from './verify.js';
export * from './tlog/cosignature.js';
export * from './tlog/ledger-audit.js';
export * from './tlog/merkle.js';
export * from './tlog/note.js';
export * from './tlog/receipt-inclusion.js';
export * from './tlog/tiles.js';
export * from './tlog/tlog-policy.js';
export * from './tlog/tlog-proof.js';
export * from './tlog/witness.js';
export * from './tlog/witness-key.js';

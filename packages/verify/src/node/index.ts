// The Node-only helpers (node:crypto, node:fs): for svc-verify and the service, never for a
// browser bundle, which imports the package's main entry only.
export { writeAtomically } from './atomic-file.js';
export { createNativeStrictVerify } from './native-ed25519.js';
export { nativeHashBytes, nativeSha256Hex } from './native-hash.js';
export { progressBar } from './progress.js';

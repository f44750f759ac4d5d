import { createHash } from 'node:crypto';
import type { Sha256Hex } from '@svc/verify';

/**
 * node:crypto's SHA-256 for the core's hashing: about three times @noble/hashes on the receipt
 * sizes here, and it hashes the string's UTF-8 without a separate encoding pass. The core
 * takes it as an argument so that it stays free of `node:*`.
 */
export const nativeSha256Hex: Sha256Hex = (text) =>
  createHash('sha256').update(text, 'utf8').digest('hex');

import { createHash } from 'node:crypto';
import type { HashBytes } from '@svc/verify';

/** node:crypto's SHA-256 for the log tree written inside every append (the core's is portable). */
export const nativeHashBytes: HashBytes = (data) => createHash('sha256').update(data).digest();

/** `"sha256:" + hex` of a text's UTF-8, as chain.receipt_hash is written. */
export const nativeTextHash = (text: string): string =>
  `sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`;

import { createHash } from 'node:crypto';
import type { HashBytes } from '../tlog/merkle.js';

/** node:crypto's SHA-256 of bytes, for the log audit that hashes every leaf and tile. */
export const nativeHashBytes: HashBytes = (data) => createHash('sha256').update(data).digest();

import { createHash } from 'node:crypto';
import type { Sha256Hex } from '../canonical.js';
import type { HashBytes } from '../tlog/merkle.js';

// node:crypto's SHA-256, the one module that supplies it: about three times @noble/hashes on
// the receipt sizes here. The portable core takes a hasher as an argument so that it stays
// free of `node:*`; svc-verify and the service pass these.

/** SHA-256 of bytes: the log tree written in every append, the log audit of every tile. */
export const nativeHashBytes: HashBytes = (data) => createHash('sha256').update(data).digest();

/** Hex SHA-256 of a text's UTF-8, hashed without a separate encoding pass. */
export const nativeSha256Hex: Sha256Hex = (text) =>
  createHash('sha256').update(text, 'utf8').digest('hex');

import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { SecretBox } from '../ports/secret-box.js';
import { readOrCreateSecretFile } from './secret-files.js';

export const KEY_ENCRYPTION_FILE = 'encryption-secret';
const VERSION = 'v1';

const decodeSecret = (text: string): Buffer | null => {
  const value = text.trim();
  const bytes = /^[0-9a-fA-F]{64}$/.test(value)
    ? Buffer.from(value, 'hex')
    : Buffer.from(value, 'base64');
  return bytes.length === 32 ? bytes : null;
};

/**
 * The 32-byte secret of the secret box (what must stay reversible, such as outbound webhook
 * secrets): SVC_KEY_ENCRYPTION_SECRET, else the file SVC_KEY_ENCRYPTION_SECRET_FILE names (a
 * mounted secret), else a file kept in the data directory — where every backup of the
 * directory carries it, which `source: 'data-dir'` lets the caller warn about.
 */
export function loadKeyEncryptionSecret(options: {
  secret?: Buffer;
  file?: string;
  dataDir: string;
}): { secret: Buffer; source: 'environment' | 'file' | 'data-dir'; path?: string } {
  if (options.secret) return { secret: options.secret, source: 'environment' };
  if (options.file) {
    let text: string;
    try {
      text = readFileSync(options.file, 'utf8');
    } catch (error) {
      throw new Error(
        `SVC_KEY_ENCRYPTION_SECRET_FILE ${options.file}: ${(error as Error).message}`,
        { cause: error },
      );
    }
    const secret = decodeSecret(text);
    if (!secret)
      throw new Error(
        `SVC_KEY_ENCRYPTION_SECRET_FILE ${options.file}: must hold 32 bytes as 64 hex characters or base64`,
      );
    return { secret, source: 'file', path: options.file };
  }
  const file = readOrCreateSecretFile(
    options.dataDir,
    KEY_ENCRYPTION_FILE,
    () => `${randomBytes(32).toString('hex')}\n`,
  );
  const secret = decodeSecret(file.contents);
  if (!secret) throw new Error(`${file.path}: expected 64 hex characters`);
  return { secret, source: 'data-dir', path: file.path };
}

/** AES-256-GCM with a random 96-bit nonce; the context (the key's email) is bound as AAD. */
export function createAesGcmBox(secret: Buffer): SecretBox {
  if (secret.length !== 32) throw new TypeError('AES-256-GCM needs a 32-byte secret');
  return {
    seal(plaintext, context) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', secret, iv);
      cipher.setAAD(Buffer.from(context, 'utf8'));
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return `${VERSION}:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64')}`;
    },
    open(sealed, context) {
      const [version, data] = sealed.split(':');
      if (version !== VERSION || !data) throw new Error('unknown sealed format');
      const bytes = Buffer.from(data, 'base64');
      const decipher = createDecipheriv('aes-256-gcm', secret, bytes.subarray(0, 12));
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(bytes.subarray(12, 28));
      return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString(
        'utf8',
      );
    },
  };
}

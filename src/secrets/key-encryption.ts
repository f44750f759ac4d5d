import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { SecretBox } from '../ports/secret-box.js';
import { readOrCreateSecretFile } from './secret-files.js';

export const KEY_ENCRYPTION_FILE = 'api-key-secret';
const VERSION = 'v1';

/** The 32-byte secret that encrypts stored API keys: configured, else kept in the data dir. */
export function loadKeyEncryptionSecret(options: { secret?: Buffer; dataDir: string }): Buffer {
  if (options.secret) return options.secret;
  const file = readOrCreateSecretFile(
    options.dataDir,
    KEY_ENCRYPTION_FILE,
    () => `${randomBytes(32).toString('hex')}\n`,
  );
  const secret = Buffer.from(file.contents.trim(), 'hex');
  if (secret.length !== 32) throw new Error(`${file.path}: expected 64 hex characters`);
  return secret;
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

import {
  createHash,
  createPublicKey,
  createPrivateKey,
  generateKeyPairSync,
  sign,
  type KeyObject,
} from 'node:crypto';

// Witnesses and logs for tests, written from C2SP signed-note and tlog-cosignature with
// node:crypto only, so that what @svc/verify accepts is checked against bytes it did not make.

const ED25519_PKCS8 = Buffer.from('302e020100300506032b657004220420', 'hex');

export interface TestSigner {
  name: string;
  /** The vkey, as a tlog-policy line takes it. */
  vkey: string;
  /** The signature line of this key over a checkpoint body (newline included). */
  line(body: string, timestamp?: number): string;
}

const keyId = (name: string, type: number, publicKey: Buffer) =>
  createHash('sha256')
    .update(`${name}\n`)
    .update(Buffer.of(type))
    .update(publicKey)
    .digest()
    .subarray(0, 4);

const vkeyOf = (name: string, type: number, publicKey: Buffer) =>
  `${name}+${keyId(name, type, publicKey).toString('hex')}+${Buffer.concat([Buffer.of(type), publicKey]).toString('base64')}`;

const rawEd25519 = (key: KeyObject) =>
  (key.type === 'public' ? key : createPublicKey(key))
    .export({ format: 'der', type: 'spki' })
    .subarray(12);

const u64 = (n: number | bigint) => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(BigInt(n));
  return b;
};

const seeded = (seed: number) =>
  createPrivateKey({
    key: Buffer.concat([ED25519_PKCS8, Buffer.alloc(32, seed)]),
    format: 'der',
    type: 'pkcs8',
  });

/** A log's checkpoint key (signed-note type 0x01): its line signs the body itself. */
export function testLog(origin: string, seed = 1): TestSigner & { privateKey: KeyObject } {
  const privateKey = seeded(seed);
  const publicKey = rawEd25519(privateKey);
  const id = keyId(origin, 0x01, publicKey);
  return {
    name: origin,
    privateKey,
    vkey: vkeyOf(origin, 0x01, publicKey),
    line: (body) =>
      `\u2014 ${origin} ${Buffer.concat([id, sign(null, Buffer.from(body), privateKey)]).toString('base64')}\n`,
  };
}

/** An Ed25519 witness (type 0x04): signs `cosignature/v1\ntime <t>\n` ‖ the body. */
export function ed25519Witness(name: string, seed = 2): TestSigner {
  const privateKey = seeded(seed);
  const publicKey = rawEd25519(privateKey);
  const id = keyId(name, 0x04, publicKey);
  return {
    name,
    vkey: vkeyOf(name, 0x04, publicKey),
    line(body, timestamp = 1_700_000_000) {
      const message = Buffer.from(`cosignature/v1\ntime ${timestamp}\n${body}`);
      const sig = sign(null, message, privateKey);
      return `\u2014 ${name} ${Buffer.concat([id, u64(timestamp), sig]).toString('base64')}\n`;
    },
  };
}

/** Whether this Node's crypto has ML-DSA-44 (Node 24 with OpenSSL 3.5 does). */
export const hasNodeMlDsa = (() => {
  try {
    generateKeyPairSync('ml-dsa-44' as 'ed25519');
    return true;
  } catch {
    return false;
  }
})();

/**
 * An ML-DSA-44 witness (type 0x06) signing the `subtree/v1` cosigned_message of a checkpoint,
 * the structure written here from tlog-cosignature's text.
 */
export function mlDsaWitness(name: string): TestSigner {
  const { publicKey, privateKey } = generateKeyPairSync('ml-dsa-44' as 'ed25519');
  const spki = publicKey.export({ format: 'der', type: 'spki' });
  const raw = spki.subarray(spki.length - 1312) as Buffer;
  const id = keyId(name, 0x06, raw);
  return {
    name,
    vkey: vkeyOf(name, 0x06, raw),
    line(body, timestamp = 1_700_000_000) {
      const [origin, size, root] = body.split('\n') as [string, string, string];
      const message = Buffer.concat([
        Buffer.from('subtree/v1\n\0'),
        Buffer.of(Buffer.byteLength(name)),
        Buffer.from(name),
        u64(timestamp),
        Buffer.of(Buffer.byteLength(origin)),
        Buffer.from(origin),
        u64(0),
        u64(BigInt(size)),
        Buffer.from(root, 'base64'),
      ]);
      const sig = sign(null, message, privateKey);
      return `\u2014 ${name} ${Buffer.concat([id, u64(timestamp), sig]).toString('base64')}\n`;
    },
  };
}

/** A checkpoint body of a tree. */
export const checkpointBody = (origin: string, size: number, root: Buffer) =>
  `${origin}\n${size}\n${root.toString('base64')}\n`;

/** The signed-note vkey (type 0x01) of a log's Ed25519 key, named by its origin. */
export const logVkey = (origin: string, publicKeyPem: string): string =>
  vkeyOf(origin, 0x01, rawEd25519(createPublicKey(publicKeyPem)));

import {
  createHash,
  createPublicKey,
  generateKeyPairSync,
  sign,
  verify,
  type KeyObject,
} from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

// A transparency-log witness written from C2SP tlog-witness and tlog-cosignature with
// node:crypto alone: it checks the log's signature and the consistency proof, keeps the size
// it cosigned last, and answers add-checkpoint as the specification says.

const sha256 = (...parts: Uint8Array[]) =>
  createHash('sha256').update(Buffer.concat(parts)).digest();
const node = (l: Buffer, r: Buffer) => sha256(Buffer.of(1), l, r);

/** RFC 9162 §2.1.4.2, written from the text. */
export function verifyConsistencyByHand(
  first: number,
  second: number,
  proof: Buffer[],
  firstRoot: Buffer,
  secondRoot: Buffer,
): boolean {
  if (first === second) return proof.length === 0 && firstRoot.equals(secondRoot);
  if (first === 0 || first > second) return false;
  let path = proof;
  if ((first & (first - 1)) === 0) path = [firstRoot, ...proof];
  if (path.length === 0) return false;
  let fn = first - 1;
  let sn = second - 1;
  while (fn % 2 === 1) {
    fn >>= 1;
    sn >>= 1;
  }
  let fr = path[0]!;
  let sr = path[0]!;
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      fr = node(c, fr);
      sr = node(c, sr);
      while (fn % 2 === 0 && fn !== 0) {
        fn >>= 1;
        sn >>= 1;
      }
    } else sr = node(sr, c);
    fn >>= 1;
    sn >>= 1;
  }
  return sn === 0 && fr.equals(firstRoot) && sr.equals(secondRoot);
}

export interface WitnessRequest {
  old: number;
  proof: string[];
  note: string;
  status: number;
}

export interface FakeWitness {
  name: string;
  /** The cosigner vkey `<name>+<key ID>+<base64(0x04 ‖ key)>`. */
  vkey: string;
  publicKey: KeyObject;
  /** The submission prefix. */
  url: string;
  requests: WitnessRequest[];
  /** The size it cosigned last (0 before the first). */
  size: number;
  /** Answer the next add-checkpoint with this instead (once). */
  next?: { status: number; body: string; contentType?: string; location?: string };
  /** Sign the wrong bytes from now on. */
  forge: boolean;
  close(): Promise<void>;
}

/** Starts a witness on 127.0.0.1 that trusts one log key for one origin. */
export async function startFakeWitness(options: {
  name: string;
  origin: string;
  logPublicKeyPem: string;
  /** Seconds since the epoch for its timestamps. */
  now: () => number;
}): Promise<FakeWitness> {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(12);
  const keyId = sha256(Buffer.from(`${options.name}\n`), Buffer.of(0x04), raw).subarray(0, 4);
  const logKey = createPublicKey(options.logPublicKeyPem);
  const logRaw = logKey.export({ format: 'der', type: 'spki' }).subarray(12);
  const logKeyId = sha256(Buffer.from(`${options.origin}\n`), Buffer.of(0x01), logRaw).subarray(
    0,
    4,
  );
  let root = sha256();

  function addCheckpoint(body: string): { status: number; body: string; contentType: string } {
    const text = (status: number, message: string) => ({
      status,
      body: `${message}\n`,
      contentType: 'text/plain; charset=utf-8',
    });
    const blank = body.indexOf('\n\n');
    if (blank < 0) return text(400, 'no empty line');
    const head = body.slice(0, blank).split('\n');
    const note = body.slice(blank + 2);
    const oldLine = /^old (0|[1-9][0-9]*)$/.exec(head[0] ?? '');
    if (!oldLine) return text(400, 'no old size line');
    const old = Number(oldLine[1]);
    const proof = head.slice(1);
    if (proof.length > 63) return text(400, 'too many proof lines');
    // The checkpoint: its body, and the log's signature among its lines.
    const split = note.lastIndexOf('\n\n');
    const checkpointText = note.slice(0, split + 1);
    const [origin, sizeText, rootText] = checkpointText.slice(0, -1).split('\n');
    if (origin !== options.origin) return text(404, 'unknown log');
    let signed = false;
    for (const line of note.slice(split + 2, -1).split('\n')) {
      const m = /^\u2014 (\S+) (\S+)$/.exec(line);
      if (!m) return text(403, 'malformed signature line');
      const sig = Buffer.from(m[2]!, 'base64');
      if (m[1] !== options.origin || !sig.subarray(0, 4).equals(logKeyId)) continue;
      if (!verify(null, Buffer.from(checkpointText), logKey, sig.subarray(4)))
        return text(403, 'bad log signature');
      signed = true;
    }
    if (!signed) return text(403, 'not signed by the log');
    const size = Number(sizeText);
    const newRoot = Buffer.from(rootText!, 'base64');
    if (old > size) return text(400, 'old size larger than the checkpoint');
    if (old !== witness.size) {
      return { status: 409, body: `${witness.size}\n`, contentType: 'text/x.tlog.size' };
    }
    if (size === 0 && !newRoot.equals(sha256())) return text(422, 'not the empty tree');
    if (old === 0 && proof.length > 0) return text(422, 'a proof from 0');
    const hashes = proof.map((p) => Buffer.from(p, 'base64'));
    if (old > 0 && !verifyConsistencyByHand(old, size, hashes, root, newRoot))
      return text(422, 'inconsistent');
    witness.size = size;
    root = newRoot;
    const time = BigInt(options.now());
    const message = witness.forge
      ? Buffer.from(`cosignature/v1\ntime ${time}\n${checkpointText}extra\n`)
      : Buffer.from(`cosignature/v1\ntime ${time}\n${checkpointText}`);
    const timestamp = Buffer.alloc(8);
    timestamp.writeBigUInt64BE(time);
    const blob = Buffer.concat([keyId, timestamp, sign(null, message, privateKey)]);
    return {
      status: 200,
      body: `\u2014 ${options.name} ${blob.toString('base64')}\n`,
      contentType: 'text/plain; charset=utf-8',
    };
  }

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      if (req.method !== 'POST' || req.url !== '/w/add-checkpoint') {
        res.writeHead(404).end();
        return;
      }
      const blank = body.indexOf('\n\n');
      const head = body.slice(0, Math.max(blank, 0)).split('\n');
      const forced = witness.next;
      witness.next = undefined;
      const answer: { status: number; body: string; contentType: string; location?: string } =
        forced ? { contentType: 'text/plain', ...forced } : addCheckpoint(body);
      witness.requests.push({
        old: Number(/^old (\d+)$/.exec(head[0] ?? '')?.[1] ?? NaN),
        proof: head.slice(1),
        note: body.slice(blank + 2),
        status: answer.status,
      });
      const headers: Record<string, string> = { 'Content-Type': answer.contentType };
      if (answer.location) headers.Location = answer.location;
      res.writeHead(answer.status, headers).end(answer.body);
    });
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  const witness: FakeWitness = {
    name: options.name,
    vkey: `${options.name}+${keyId.toString('hex')}+${Buffer.concat([Buffer.of(4), raw]).toString('base64')}`,
    publicKey,
    url: `http://127.0.0.1:${port}/w`,
    requests: [],
    size: 0,
    forge: false,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return witness;
}

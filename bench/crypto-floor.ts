import { generateKeyPairSync, sign, verify } from 'node:crypto';

/**
 * CPU microseconds of one node:crypto (OpenSSL) Ed25519 signature and verification on this
 * machine. Evaluate signs once and verify verifies once per request, while the Express
 * baseline does no cryptography: how much the ratios to Express move from one CPU to another
 * follows these two figures (on an Intel Xeon, OpenSSL's verification costs 2.5 times its
 * signing and several times a bare Express request).
 */
export function ed25519NativeCost(seconds = 0.3): { sign_us: number; verify_us: number } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  // About the size of a receipt's signed core.
  const message = Buffer.alloc(900, 0x61);
  const signature = sign(null, message, privateKey);
  const cpuUs = (fn: () => boolean | Buffer): number => {
    for (let i = 0; i < 50; i++) fn();
    let n = 0;
    const before = process.cpuUsage();
    const deadline = performance.now() + seconds * 1000;
    while (performance.now() < deadline) {
      for (let i = 0; i < 20; i++) fn();
      n += 20;
    }
    const used = process.cpuUsage(before);
    return Number(((used.user + used.system) / n).toFixed(1));
  };
  const sign_us = cpuUs(() => sign(null, message, privateKey));
  const verify_us = cpuUs(() => {
    if (!verify(null, message, publicKey, signature)) throw new Error('Ed25519 did not verify');
    return true;
  });
  return { sign_us, verify_us };
}

import type { Ed25519Verify } from '@svc/verify';

const VERDICTS_KEPT = 256;

/**
 * Ed25519 verification that remembers its last answers. Every verify request checks the
 * checkpoint its inclusion proof is against, and that is nearly always the newest one: the
 * same note, signature and key, until the next checkpoint. The answer is a pure function of
 * the three, so it is kept under all three, whole (a different byte is a different entry):
 * a presented note cannot borrow the verdict of another, and a false verdict is kept as
 * false. Bounded: the oldest entry goes first.
 */
export function rememberingVerify(verify: Ed25519Verify, kept = VERDICTS_KEPT): Ed25519Verify {
  const verdicts = new Map<string, boolean>();
  return (signature, message, publicKey) => {
    // Separators base64 never holds: no two triples share a key.
    const key = `${Buffer.from(publicKey).toString('base64')}:${Buffer.from(signature).toString('base64')}:${Buffer.from(message).toString('latin1')}`;
    const known = verdicts.get(key);
    if (known !== undefined) return known;
    const verdict = verify(signature, message, publicKey);
    if (verdicts.size >= kept) verdicts.delete(verdicts.keys().next().value!);
    verdicts.set(key, verdict);
    return verdict;
  };
}

import type { LogTreeStore } from '../ports/log-tree.js';

/**
 * The origin a new ledger takes (contract §8, §9): the configured one, else `svc/` and the
 * first 16 hex digits of the signing key's key_id, so two ledgers signed by different keys
 * never share one.
 */
export const logOriginFor = (configured: string | undefined, keyId: string): string =>
  configured ?? `svc/${keyId.replace(/^sha256:/, '').slice(0, 16)}`;

/**
 * The ledger's origin, fixed once and kept with the ledger: an existing ledger keeps the one
 * its receipts carry, whatever the key or base URL is now. An SVC_LOG_ORIGIN that names
 * another is refused, since receipts and checkpoints under two origins would be two logs.
 */
export async function establishLogOrigin(
  tree: LogTreeStore,
  options: { setting: string | undefined; candidate: string },
): Promise<string> {
  const origin = await tree.initOrigin(options.setting ?? options.candidate);
  if (options.setting !== undefined && options.setting !== origin) {
    throw new Error(
      `SVC_LOG_ORIGIN is "${options.setting}", but this ledger's origin is "${origin}" (signed into its receipts and checkpoints): unset SVC_LOG_ORIGIN or set it to "${origin}"`,
    );
  }
  return origin;
}

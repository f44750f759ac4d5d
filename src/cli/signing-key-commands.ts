import { existsSync, readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parseFingerprint, type SigningKeyRecord } from '@svc/verify';
import type { Config } from '../config/config.js';
import { systemClock } from '../ports/clock.js';
import type { Store } from '../ports/store.js';
import { writeNewPrivateFile } from '../secrets/secret-files.js';
import {
  generateSigningKeyPem,
  NEXT_SIGNING_KEY_FILE,
  SIGNING_KEY_FILE,
  serverKeyFromPem,
} from '../secrets/server-key.js';
import { logOriginFor } from '../services/log-origin.js';
import { SigningKeyError, SigningKeyService } from '../services/signing-keys.js';

type Out = (line: string) => void;

/** One line per key of the history. */
export const describeSigningKey = (k: SigningKeyRecord): string =>
  [
    k.key_id,
    k.status,
    `sequences ${k.first_sequence}-${k.last_sequence ?? ''}`,
    `activated ${k.activated_at}`,
    k.retired_at ? `retired ${k.retired_at}` : null,
    k.revoked_from_sequence !== null
      ? `revoked from ${k.revoked_from_sequence} at ${k.revoked_at}`
      : null,
    k.transition ? `transition from ${k.transition.statement.previous_key_id}` : 'no transition',
    k.revocation ? `revocation signed by ${k.revocation.statement.signer_key_id}` : null,
    k.public_key_pem === null ? 'public key unknown' : null,
  ]
    .filter((part) => part !== null)
    .join('  ');

/**
 * `svc signing-key list | rotate | revoke`. The service's key history lives in the store; the
 * private key lives in the data directory (signing-key.pem) unless SVC_SIGNING_KEY is set.
 */
export async function signingKeyCommands(
  store: Store,
  config: Config,
  args: string[],
  out: Out,
  usage: (message: string) => never,
): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: {
      'new-key-file': { type: 'string' },
      'from-sequence': { type: 'string' },
    },
    allowPositionals: true,
    strict: true,
  });
  const [command, target, ...rest] = positionals;
  if (rest.length > 0) return usage('too many arguments');
  // The origin is the ledger's own, stored when the service first started.
  const keyFile = join(config.dataDir, SIGNING_KEY_FILE);
  const currentPem =
    config.signingKeyPem ?? (existsSync(keyFile) ? readFileSync(keyFile, 'utf8') : undefined);
  const oldKey =
    currentPem === undefined
      ? undefined
      : serverKeyFromPem(currentPem, config.signingKeyPem ? 'SVC_SIGNING_KEY' : keyFile);
  const origin = await store.tree.initOrigin(
    logOriginFor(config.logOrigin, oldKey?.keyId ?? 'sha256:unknown'),
  );
  const service = new SigningKeyService({ store: store.signingKeys, clock: systemClock, origin });
  switch (command) {
    case 'list': {
      if (target) return usage('signing-key list takes no argument');
      const history = await service.list();
      if (history.length === 0) out('no keys (the service records its key when it starts)');
      for (const k of history) out(describeSigningKey(k));
      return 0;
    }
    case 'rotate': {
      if (target) return usage('signing-key rotate takes no argument');
      if (!oldKey)
        throw new Error(
          `no signing key to rotate from: neither SVC_SIGNING_KEY nor ${keyFile} is there`,
        );
      if (config.signingKeyPem && values['new-key-file'] === undefined)
        return usage(
          'with SVC_SIGNING_KEY set, rotate needs --new-key-file <pem>: the new key you will set SVC_SIGNING_KEY to',
        );
      const newPem =
        values['new-key-file'] === undefined
          ? generateSigningKeyPem()
          : readFileSync(values['new-key-file'], 'utf8');
      const newKey = serverKeyFromPem(newPem, values['new-key-file'] ?? 'the generated key');
      // A ledger the service has not started on since the history existed records its key now.
      await service.register(oldKey);
      const next = join(config.dataDir, NEXT_SIGNING_KEY_FILE);
      if (!config.signingKeyPem) writeNewPrivateFile(next, newPem);
      const history = await service.rotate(oldKey, newKey);
      // The old private key is overwritten: a retired key signs nothing again.
      if (!config.signingKeyPem) renameSync(next, keyFile);
      for (const k of history.slice(-2)) out(describeSigningKey(k));
      out(
        config.signingKeyPem
          ? `set SVC_SIGNING_KEY to the contents of ${values['new-key-file']} and restart the service: until then it signs nothing (its key is retired)`
          : `the new key is in ${keyFile}; restart the service: until then it signs nothing (its key is retired)`,
      );
      return 0;
    }
    case 'revoke': {
      if (!target) return usage('signing-key revoke needs a key_id');
      const from = values['from-sequence'];
      if (from === undefined || !/^[1-9]\d*$/.test(from))
        return usage('signing-key revoke needs --from-sequence <N>, a sequence from 1');
      let keyId: string;
      try {
        keyId = parseFingerprint(target);
      } catch {
        return usage(`key_id must be "sha256:" followed by 64 hex digits, got "${target}"`);
      }
      // The service's own key (the newest of the history) signs the revocation statement.
      if (!oldKey)
        throw new Error(
          `no signing key to sign the revocation with: neither SVC_SIGNING_KEY nor ${keyFile} is there`,
        );
      await service.register(oldKey).catch((error: unknown) => {
        // A key revoked or retired already is still the newest: it signs what comes after it.
        if (!(error instanceof SigningKeyError)) throw error;
      });
      const history = await service.revoke(keyId, Number(from), oldKey);
      out(describeSigningKey(history.find((k) => k.key_id === keyId)!));
      return 0;
    }
    default:
      return usage(`unknown signing-key command "${command ?? ''}"`);
  }
}

#!/usr/bin/env node
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config/config.js';
import { TIERS, type Tier } from '../ports/api-key-store.js';
import { systemClock } from '../ports/clock.js';
import { createAesGcmBox, loadKeyEncryptionSecret } from '../secrets/key-encryption.js';
import { ApiKeyService, TIER_LIMITS } from '../services/api-keys.js';
import { openSqliteStore } from '../storage/sqlite/sqlite-store.js';

const HELP = `svc — operator commands for the svc service

Usage:
  svc keys set-tier <email> <tier>   change the tier of the key that belongs to <email>
  svc keys show <email>              print the tier and creation time of <email>'s key
  svc --help                         this text

Tiers: free (100 requests/hour), pilot (10,000/hour), enterprise (unlimited).

The command opens the embedded store in SVC_DATA_DIR (default ./data) directly; it is
safe to run while the service is up. Through npm: npm run svc -- keys set-tier a@b.co pilot

Exit codes: 0 done, 1 failed (e.g. no key for that e-mail), 2 wrong usage.`;

const usage = (message: string): never => {
  console.error(`svc: ${message}\nRun "svc --help" for usage.`);
  process.exit(2);
};

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: { help: { type: 'boolean', short: 'h' } },
    allowPositionals: true,
    strict: true,
  });
  if (values.help || positionals.length === 0) {
    console.log(HELP);
    return 0;
  }
  const [group, command, email, tier] = positionals;
  if (group !== 'keys') return usage(`unknown command "${group}"`);
  if (command !== 'set-tier' && command !== 'show')
    return usage(`unknown keys command "${command ?? ''}"`);
  if (!email) return usage(`keys ${command} needs an e-mail address`);
  if (command === 'set-tier' && !TIERS.includes(tier as Tier)) {
    return usage(`tier must be one of ${TIERS.join(', ')}; got "${tier ?? ''}"`);
  }
  if (positionals.length > (command === 'set-tier' ? 4 : 3)) return usage('too many arguments');

  const config = loadConfig();
  const store = openSqliteStore(join(config.dataDir, 'ledger.db'));
  try {
    const box = createAesGcmBox(
      loadKeyEncryptionSecret({ secret: config.keyEncryptionSecret, dataDir: config.dataDir }),
    );
    const keys = new ApiKeyService({ keys: store.apiKeys, box, clock: systemClock });
    const record =
      command === 'set-tier'
        ? await keys.setTier(email, tier as Tier)
        : await store.apiKeys.findByEmail(email.trim().toLowerCase());
    if (!record) {
      console.error(`svc: no API key belongs to ${email}`);
      return 1;
    }
    const limit = TIER_LIMITS[record.tier];
    const shown = limit === Number.POSITIVE_INFINITY ? 'unlimited' : `${limit} requests/hour`;
    console.log(
      command === 'set-tier'
        ? `${record.email}: tier ${record.tier} (${shown})`
        : `${record.email}: tier ${record.tier} (${shown}), key created ${record.createdAt}`,
    );
    return 0;
  } finally {
    await store.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (
      error instanceof ConfigError ||
      (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
    ) {
      return usage((error as Error).message);
    }
    console.error(`svc: ${(error as Error).message}`);
    process.exit(1);
  },
);

#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config/config.js';
import { emailSchema } from '../core/email.js';
import { policyNameSchema } from '../core/policies.js';
import { policyConfigSchema } from '../core/policy-config.js';
import { OVERRIDE_MODES, type OverrideMode } from '../core/policy-overrides.js';
import { isSvcError } from '../core/errors.js';
import { SERVICE_NAME, SERVICE_VERSION } from '../core/version.js';
import {
  READERS,
  TIERS,
  type ApiKeyRecord,
  type Reader,
  type Tier,
} from '../ports/api-key-store.js';
import { systemClock } from '../ports/clock.js';
import type { Store } from '../ports/store.js';
import { ApiKeyService, TIER_LIMITS } from '../services/api-keys.js';
import { PolicyService } from '../services/policies.js';
import { createStore } from '../storage/create-store.js';
import { exportLog } from './log-export.js';
import { MCP_HELP, mcpCommand } from './mcp-command.js';
import { MissingLedgerError } from '../storage/missing-ledger.js';
import { signingKeyCommands } from './signing-key-commands.js';

const HELP = `svc — operator commands for the svc service

Usage:
  svc keys list                                 every key: key_id, email, tier, lock, state
  svc keys create --email <e> [--tier <t>] [--policy <name> --locked] [--reader all|own]
                  [--reviewer]                  issue a key (printed once); --locked makes
                                                every claim of the key use <name>; --reader all
                                                lets it read every receipt when reads are
                                                private (SVC_PUBLIC_READS=false); --reviewer
                                                lets it record dispositions (decide
                                                escalations), which no signup key may
  svc keys rotate <key_id|email>                replace a key: prints the new one, revokes the old
  svc keys revoke <key_id|email>                revoke a key at once (also a locked one)
  svc keys set-tier <email|key_id> <tier>       change the tier of a key
  svc keys set-reader <email|key_id> all|own    what the key reads when reads are private
  svc keys set-reviewer <email|key_id> on|off   grant or withdraw the reviewer capability
  svc keys unlock <email|key_id>                lift a key's policy lock
  svc keys show <email|key_id>                  a key's details; by e-mail, every key of the
                                                address, revoked ones marked revoked
  svc policies list                             every policy, with owner and config_hash
  svc policies create <name> --config '<json>' [--overrides tighten|none|any]
                      [--description <text>]    create a shared policy every key may use
  svc policies delete <name>                    delete a shared policy
  svc policy check <file>                       validate a policy file or a .github/svc.yml
                                                offline; prints its effective config and
                                                config_hash (svc policy check --help)
  svc policy test <policy> <cases.yml>          evaluate test cases against a policy file, a
                                                .github/svc.yml or a built-in policy, offline;
                                                PASS/FAIL per case (svc policy test --help)
  svc log export <dir> [--receipts]             write the newest stored checkpoint and every
                                                tile and entry bundle of its size as static
                                                files (C2SP tlog-tiles paths) under <dir>;
                                                again later, it writes only what is new.
                                                --receipts: also every receipt of it as
                                                receipts/<id>.json beside its C2SP
                                                receipts/<id>.tlog-proof
  svc signing-key list                          the server's signing keys: status, sequences
  svc signing-key rotate [--new-key-file <pem>] make a new key current from the next sequence;
                                                the old key signs the transition and retires.
                                                Takes effect when the service restarts; until
                                                then it signs nothing (docs/OPERATIONS.md)
  svc signing-key revoke <key_id> --from-sequence <N>
                                                the key's receipts from N fail verification
  svc mcp                                       svc's MCP server on stdio, over the REST API
                                                of the svc at SVC_URL with the key
                                                SVC_API_KEY (svc mcp --help, docs/MCP.md)
  svc mcp-gateway --config <file>               an MCP server in front of the MCP servers the
                                                file names, every tool call decided by svc
                                                (svc mcp-gateway --help, docs/MCP.md)
  svc --help                                    this text
  svc --version                                 the version of svc

Tiers: free (100 requests/hour), pilot (10,000/hour), enterprise (unlimited).
Readers: own (default; only the key's account's receipts when reads are private), all.
A locked key cannot revoke itself (DELETE /v1/account is 403 locked_key): only these
commands revoke it or lift its lock. A revoked account's address cannot sign up again.
Raw keys are printed only by create and rotate: svc keeps digests only.

Every command but svc policy (which reads files only) works on the store the service uses:
the MongoDB database of MONGODB_URI (and MONGODB_DATABASE) when MONGODB_URI is set, else
the embedded store in SVC_DATA_DIR (default ./data). It opens it directly and is safe to
run while the service is up. It needs a ledger there: the service creates it when it first
starts, and no command creates one (a data directory or database without a ledger is
refused with exit code 2).
Through npm: npm run svc -- keys list

Exit codes: 0 done, 1 failed (e.g. no such key), 2 wrong usage.`;

class UsageError extends Error {}
const usage = (message: string): never => {
  throw new UsageError(message);
};

const limitText = (tier: Tier) => {
  const limit = TIER_LIMITS[tier];
  return limit === Number.POSITIVE_INFINITY ? 'unlimited' : `${limit} requests/hour`;
};

const describeKey = (r: ApiKeyRecord) =>
  `${r.keyId}  ${r.email}  tier ${r.tier} (${limitText(r.tier)})  policy ${r.lockedPolicy ? `${r.lockedPolicy} (locked)` : '-'}  created ${r.createdAt}  ${r.revokedAt ? `revoked ${r.revokedAt}` : 'active'}${r.reader === 'all' ? '  reader all' : ''}${r.reviewer ? '  reviewer' : ''}`;

const tierOf = (value: string | undefined): Tier =>
  TIERS.includes(value as Tier)
    ? (value as Tier)
    : usage(`tier must be one of ${TIERS.join(', ')}; got "${value ?? ''}"`);

const readerOf = (value: string | undefined): Reader =>
  READERS.includes(value as Reader)
    ? (value as Reader)
    : usage(`reader must be one of ${READERS.join(', ')}; got "${value ?? ''}"`);

/**
 * The store the service uses: MongoDB when MONGODB_URI is set, else SVC_DATA_DIR's file. Only
 * one that holds a ledger: a wrong SVC_DATA_DIR must not get an empty ledger of its own.
 */
function openStore(): Promise<Store> {
  return createStore(loadConfig(), { mustExist: true });
}

type Out = (line: string) => void;

async function keys(store: Store, args: string[], out: Out): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: {
      email: { type: 'string' },
      tier: { type: 'string' },
      policy: { type: 'string' },
      locked: { type: 'boolean' },
      reader: { type: 'string' },
      reviewer: { type: 'boolean' },
    },
    allowPositionals: true,
    strict: true,
  });
  const [command, target, extra, ...rest] = positionals;
  const service = new ApiKeyService({ keys: store.apiKeys, clock: systemClock });
  const policies = new PolicyService({ policies: store.policies, clock: systemClock });
  const found = async () => {
    if (!target) return usage(`keys ${command} needs a key_id or an e-mail address`);
    const record = await service.findActive(target);
    if (!record) throw new Error(`no active key matches ${target}`);
    return record;
  };
  switch (command) {
    case 'list': {
      const all = await store.apiKeys.list();
      if (all.length === 0) out('no keys');
      for (const record of all) out(describeKey(record));
      return 0;
    }
    case 'show': {
      if (!target) return usage('keys show needs a key_id or an e-mail address');
      const all = await service.findAny(target);
      if (all.length === 0) throw new Error(`no key matches ${target}`);
      for (const record of all) out(describeKey(record));
      return 0;
    }
    case 'create': {
      if (values.email === undefined) return usage('keys create needs --email <address>');
      // The address rule of signup (POST /v1/signup), so the CLI issues no key the API would not.
      const email = emailSchema.safeParse(values.email);
      if (!email.success)
        return usage(email.error.issues.map((issue) => `--email: ${issue.message}`).join('; '));
      if (values.locked && !values.policy) return usage('--locked needs --policy <name>');
      if (values.policy && !values.locked)
        return usage('--policy applies to locked keys only: add --locked');
      if (values.policy && !(await policies.resolve(values.policy, null)))
        throw new Error(`no built-in or shared policy named "${values.policy}"`);
      const issued = await service.create({
        email: email.data,
        tier: values.tier === undefined ? 'free' : tierOf(values.tier),
        lockedPolicy: values.policy ?? null,
        reader: values.reader === undefined ? 'own' : readerOf(values.reader),
        reviewer: values.reviewer === true,
      });
      out(issued.apiKey);
      out(describeKey(issued.record));
      return 0;
    }
    case 'rotate': {
      const issued = await service.rotate(await found());
      out(issued.apiKey);
      out(describeKey(issued.record));
      return 0;
    }
    case 'revoke': {
      const record = await found();
      // The key and the account's webhook receivers, in one transaction.
      const closed = await service.revokeAccount(record.keyId);
      if (!closed) throw new Error(`${record.keyId} was revoked meanwhile`);
      const disabled = closed.receiversDisabled;
      out(
        `${record.keyId} (${record.email}) revoked${disabled ? `; ${disabled} webhook receiver(s) disabled` : ''}`,
      );
      return 0;
    }
    case 'set-tier': {
      const tier = tierOf(extra);
      if (rest.length > 0) return usage('too many arguments');
      const record = await found();
      const updated = await service.setTier(record.email, tier);
      if (!updated) throw new Error(`no active key matches ${target}`);
      out(describeKey(updated));
      return 0;
    }
    case 'set-reader': {
      const reader = readerOf(extra);
      if (rest.length > 0) return usage('too many arguments');
      const record = await found();
      const updated = await service.setReader(record.email, reader);
      if (!updated) throw new Error(`no active key matches ${target}`);
      out(describeKey(updated));
      return 0;
    }
    case 'set-reviewer': {
      if (extra !== 'on' && extra !== 'off')
        return usage(`set-reviewer takes on or off; got "${extra ?? ''}"`);
      if (rest.length > 0) return usage('too many arguments');
      const record = await found();
      const updated = await service.setReviewer(record.email, extra === 'on');
      if (!updated) throw new Error(`no active key matches ${target}`);
      out(describeKey(updated));
      return 0;
    }
    case 'unlock': {
      if (extra !== undefined) return usage('too many arguments');
      const record = await found();
      if (record.lockedPolicy === null) throw new Error(`${record.keyId} is not locked`);
      const updated = await service.unlock(record.email);
      if (!updated) throw new Error(`no active key matches ${target}`);
      out(describeKey(updated));
      return 0;
    }
    default:
      return usage(`unknown keys command "${command ?? ''}"`);
  }
}

async function policyCommands(store: Store, args: string[], out: Out): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: {
      config: { type: 'string' },
      overrides: { type: 'string' },
      description: { type: 'string' },
    },
    allowPositionals: true,
    strict: true,
  });
  const [command, name] = positionals;
  const service = new PolicyService({ policies: store.policies, clock: systemClock });
  switch (command) {
    case 'list':
      for (const p of await service.listAll()) {
        const owner = p.builtin ? 'built-in' : p.owner === null ? 'shared' : `account ${p.owner}`;
        out(
          `${p.name}  ${owner}  overrides ${p.overrides}  ${p.config_hash}  ${JSON.stringify(p.config)}`,
        );
      }
      return 0;
    case 'create': {
      const parsedName = policyNameSchema.safeParse(name);
      if (!parsedName.success) return usage(`policy name ${parsedName.error.issues[0]!.message}`);
      if (!values.config) return usage("policies create needs --config '<json>'");
      let json: unknown;
      try {
        json = JSON.parse(values.config);
      } catch {
        return usage('--config is not JSON');
      }
      const config = policyConfigSchema.safeParse(json);
      if (!config.success)
        return usage(
          `--config: ${config.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
        );
      if (
        values.overrides !== undefined &&
        !OVERRIDE_MODES.includes(values.overrides as OverrideMode)
      )
        return usage(`--overrides must be one of ${OVERRIDE_MODES.join(', ')}`);
      const view = await service.create(
        {
          name: parsedName.data,
          description: values.description,
          config: config.data,
          overrides: values.overrides as OverrideMode | undefined,
        },
        null,
      );
      out(`${view.name}  shared  overrides ${view.overrides}  ${view.config_hash}`);
      return 0;
    }
    case 'delete':
      if (!name) return usage('policies delete needs a name');
      await service.delete(name, null);
      out(`${name} deleted`);
      return 0;
    default:
      return usage(`unknown policies command "${command ?? ''}"`);
  }
}

function checkLogArgs(args: string[]): { dir: string; receipts: boolean } {
  const { positionals, values } = parseArgs({
    args,
    options: { receipts: { type: 'boolean' } },
    allowPositionals: true,
    strict: true,
  });
  const [command, dir, ...rest] = positionals;
  if (command !== 'export') return usage(`unknown log command "${command ?? ''}"`);
  if (!dir) return usage('log export needs a directory');
  if (rest.length > 0) return usage('too many arguments');
  return { dir, receipts: values.receipts ?? false };
}

async function logCommands(store: Store, args: string[], out: Out): Promise<number> {
  const { dir, receipts } = checkLogArgs(args);
  const done = await exportLog(store, dir, { receipts });
  out(
    `${done.origin} at size ${done.size}: ${done.written} file(s) written, ${done.skipped} full tile(s) already there; checkpoint in ${done.checkpointPath}${receipts ? `; ${done.receipts} receipt(s) with their .tlog-proof in ${dir}/receipts` : ''}`,
  );
  return 0;
}

async function main(argv: string[]): Promise<number> {
  // An MCP server on stdio, talking to svc over HTTP: no store, its own --help. Loaded only
  // here, so the other commands never load the MCP SDK.
  if (argv[0] === 'mcp-gateway') {
    const { GatewayUsageError, runMcpGateway } = await import('./mcp-gateway/main.js');
    try {
      return await runMcpGateway(argv.slice(1), process.env);
    } catch (error) {
      if (error instanceof GatewayUsageError) usage(error.message);
      throw error;
    }
  }
  // Files only: no store is opened, and the subcommands answer their own --help. Loaded only
  // here: its YAML parser is a good part of the start-up of every other command.
  if (argv[0] === 'policy') {
    const { policyFileCommands } = await import('./policy-commands.js');
    return policyFileCommands(
      argv.slice(1),
      {
        out: (line) => void process.stdout.write(`${line}\n`),
        err: (line) => void process.stderr.write(`${line}\n`),
      },
      usage,
    );
  }
  // An API client of a running svc: no store is opened.
  if (argv[0] === 'mcp') {
    if (argv.includes('--help') || argv.includes('-h')) {
      process.stdout.write(`${MCP_HELP}\n`);
      return 0;
    }
    if (argv.length > 1) return usage('svc mcp takes no arguments');
    return mcpCommand(process.env, usage);
  }
  if (argv.length === 0 || argv[0] === '--help' || argv[0] === '-h' || argv.includes('--help')) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  if (argv.length === 1 && argv[0] === '--version') {
    process.stdout.write(`${SERVICE_NAME} ${SERVICE_VERSION}\n`);
    return 0;
  }
  const [group, ...rest] = argv;
  if (group !== 'keys' && group !== 'policies' && group !== 'log' && group !== 'signing-key')
    return usage(`unknown command "${group}"`);
  if (group === 'log') checkLogArgs(rest);
  const store = await openStore();
  const out: Out = (line) => void process.stdout.write(`${line}\n`);
  try {
    if (group === 'log') return await logCommands(store, rest, out);
    if (group === 'signing-key')
      return await signingKeyCommands(store, loadConfig(), rest, out, usage);
    return group === 'keys' ? await keys(store, rest, out) : await policyCommands(store, rest, out);
  } finally {
    await store.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (
      error instanceof UsageError ||
      error instanceof ConfigError ||
      error instanceof MissingLedgerError ||
      (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
    ) {
      process.stderr.write(`svc: ${(error as Error).message}\nRun "svc --help" for usage.\n`);
      process.exit(2);
    }
    const message = isSvcError(error) ? error.message : (error as Error).message;
    process.stderr.write(`svc: ${message}\n`);
    process.exit(1);
  },
);

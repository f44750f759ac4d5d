import { hashText } from '@svc/verify';
import { nativeSha256Hex } from '@svc/verify/node';
import type { Database, Statement } from 'better-sqlite3';
import type { PolicyConfig } from '../../core/policy-config.js';

/**
 * The policy configs receipts were evaluated under, each stored once (table policy_configs)
 * and named from a receipt's stored evaluation by `config_ref`, the SHA-256 of its stored
 * text. A config is the same for every claim under one policy, and runs to kilobytes (the
 * built-in `agent` policy's to 6 KB): written with every receipt, it was most of the row, and
 * of the pages each group commit writes and syncs. The ref names the stored text only; what
 * receipts sign is `policy.config_hash`, over the config's canonical form (contract §4).
 */
export class SqlitePolicyConfigs {
  // Per config object: the policies applied as they are give every claim the same frozen one
  // (core/effective-policy.ts), so its text and ref are made once.
  private readonly refs = new WeakMap<PolicyConfig, { ref: string; text: string }>();
  private readonly texts = new Map<string, string>();
  private insertStatement?: Statement<[string, string]>;
  private selectStatement?: Statement<[string], { config_json: string }>;

  constructor(private readonly db: Database) {}

  /**
   * The ref of `config`, its text stored (if not already) in the caller's transaction: the row
   * is written or rolled back with the receipt that names it, never kept in memory as written.
   */
  store(config: PolicyConfig): string {
    let found = this.refs.get(config);
    if (!found) {
      const text = JSON.stringify(config);
      found = { ref: hashText(text, nativeSha256Hex), text };
      this.refs.set(config, found);
    }
    this.insertStatement ??= this.db.prepare(
      'INSERT INTO policy_configs (config_ref, config_json) VALUES (?, ?) ON CONFLICT DO NOTHING',
    );
    this.insertStatement.run(found.ref, found.text);
    return found.ref;
  }

  /** The stored text a ref names; throws when the ledger does not hold it. */
  readonly text = (ref: string): string => {
    let text = this.texts.get(ref);
    if (text === undefined) {
      // Prepared on first use: a ledger opened read-only at an older schema has no such table,
      // and none of its receipts names a ref.
      this.selectStatement ??= this.db.prepare(
        'SELECT config_json FROM policy_configs WHERE config_ref = ?',
      );
      text = this.selectStatement.get(ref)?.config_json;
      if (text === undefined) throw new Error(`ledger: no stored policy config ${ref}`);
      // A claim's own policyConfig makes a config of its own: bounded, as a cache.
      if (this.texts.size >= MAX_CACHED) this.texts.clear();
      this.texts.set(ref, text);
    }
    return text;
  };
}

const MAX_CACHED = 256;

const byDatabase = new WeakMap<Database, SqlitePolicyConfigs>();

/** The one SqlitePolicyConfigs of a connection, shared by its ledger, queries and sessions. */
export function policyConfigsOf(db: Database): SqlitePolicyConfigs {
  let configs = byDatabase.get(db);
  if (!configs) {
    configs = new SqlitePolicyConfigs(db);
    byDatabase.set(db, configs);
  }
  return configs;
}

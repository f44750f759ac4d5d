import { hashCanonical } from '@svc/verify';
import { SvcError } from '../core/errors.js';
import { BUILTIN_POLICIES, builtinPolicy } from '../core/policies.js';
import { resolvePolicy, type PolicyConfig, type PolicyConfigInput } from '../core/policy-config.js';
import type { OverrideMode } from '../core/policy-overrides.js';
import type { Clock } from '../ports/clock.js';
import type { PolicyRecord, PolicyStore } from '../ports/policy-store.js';

export interface PolicyView {
  name: string;
  description: string | null;
  builtin: boolean;
  /** Created by an operator and usable by every key; false for built-ins and owned ones. */
  shared: boolean;
  overrides: OverrideMode;
  /** The members the policy sets; for built-ins every member. */
  config: PolicyConfigInput;
  /** What evaluation uses: `config` over the contract defaults. */
  effective: PolicyConfig;
  /** H(effective): what a receipt's `policy.config_hash` says when nothing was overridden. */
  config_hash: string;
  created_at: string | null;
}

/** A policy a claim is evaluated under: a built-in, the caller's own, or a shared one. */
export interface ResolvedPolicy {
  name: string;
  config: PolicyConfig;
  overrides: OverrideMode;
}

const viewOf = (record: PolicyRecord): PolicyView => {
  const effective = resolvePolicy(record.config);
  return {
    name: record.name,
    description: record.description,
    builtin: false,
    shared: record.owner === null,
    overrides: record.overrides,
    config: record.config,
    effective,
    config_hash: hashCanonical(effective),
    created_at: record.createdAt,
  };
};

const BUILTIN_VIEWS: readonly PolicyView[] = BUILTIN_POLICIES.map((p) => ({
  name: p.name,
  description: p.description,
  builtin: true,
  shared: false,
  overrides: p.overrides,
  config: { ...p.config },
  effective: { ...p.config },
  config_hash: hashCanonical(p.config),
  created_at: null,
}));

/**
 * Policies: built-ins (reserved names), each account's own, and shared ones an operator
 * created. An account sees and uses only built-ins, shared ones and its own, so no key can
 * plant or alter a policy another key's claims are evaluated under.
 */
export class PolicyService {
  constructor(private readonly deps: { policies: PolicyStore; clock: Clock }) {}

  /** What `owner` may use (null: anonymous or operator-shared only); built-ins first. */
  async list(owner: string | null): Promise<PolicyView[]> {
    return [...BUILTIN_VIEWS, ...(await this.deps.policies.listVisible(owner)).map(viewOf)];
  }

  /** Every policy of every owner, for operators, with its owner. */
  async listAll(): Promise<(PolicyView & { owner: string | null })[]> {
    return [
      ...BUILTIN_VIEWS.map((v) => ({ ...v, owner: null })),
      ...(await this.deps.policies.listAll()).map((r) => ({ ...viewOf(r), owner: r.owner })),
    ];
  }

  async get(name: string, owner: string | null): Promise<PolicyView> {
    const builtin = BUILTIN_VIEWS.find((v) => v.name === name);
    if (builtin) return builtin;
    const record = await this.find(name, owner);
    if (!record) throw new SvcError('not_found', `No policy named ${JSON.stringify(name)}`);
    return viewOf(record);
  }

  /** The policy a claim naming `name` is evaluated under, or null when `owner` has none. */
  async resolve(name: string, owner: string | null): Promise<ResolvedPolicy | null> {
    const builtin = builtinPolicy(name);
    // The built-in's own (frozen) config: one object for every claim under it, so that its
    // effective config and canonical text are computed once (core/effective-policy.ts).
    if (builtin) return { name, config: builtin.config, overrides: builtin.overrides };
    const record = await this.find(name, owner);
    return record
      ? { name, config: resolvePolicy(record.config), overrides: record.overrides }
      : null;
  }

  /** Policies are immutable: a taken name is a conflict, never an update. */
  async create(
    input: {
      name: string;
      description?: string;
      config: PolicyConfigInput;
      overrides?: OverrideMode;
    },
    owner: string | null,
  ): Promise<PolicyView> {
    const conflict = (why: string) =>
      new SvcError(
        'policy_conflict',
        `A policy named ${JSON.stringify(input.name)} ${why}; policies are immutable, choose another name`,
      );
    if (builtinPolicy(input.name)) throw conflict('is built in');
    if (owner !== null && (await this.deps.policies.get(null, input.name)))
      throw conflict('is shared by the operator');
    const record: PolicyRecord = {
      owner,
      name: input.name,
      description: input.description ?? null,
      config: input.config,
      overrides: input.overrides ?? 'tighten',
      createdAt: new Date(this.deps.clock.now()).toISOString(),
    };
    if ((await this.deps.policies.insert(record)) === 'exists') throw conflict('already exists');
    return viewOf(record);
  }

  /** Deletes the owner's policy; anything else (another's, shared, built-in) is not found. */
  async delete(name: string, owner: string | null): Promise<void> {
    if (!(await this.deps.policies.delete(owner, name)))
      throw new SvcError('not_found', `No policy named ${JSON.stringify(name)} of yours`);
  }

  // Shared before own: an operator's shared policy always means what the operator made it,
  // even if an account created one of that name while the shared one was away.
  private async find(name: string, owner: string | null): Promise<PolicyRecord | null> {
    return (
      (await this.deps.policies.get(null, name)) ??
      (owner !== null ? await this.deps.policies.get(owner, name) : null)
    );
  }
}

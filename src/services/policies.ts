import { SvcError } from '../core/errors.js';
import { BUILTIN_POLICIES, builtinPolicy } from '../core/policies.js';
import { resolvePolicy, type PolicyConfig, type PolicyConfigInput } from '../core/policy-config.js';
import type { Clock } from '../ports/clock.js';
import type { PolicyRecord, PolicyStore } from '../ports/policy-store.js';

export interface PolicyView {
  name: string;
  description: string | null;
  builtin: boolean;
  /** The members the policy sets; for built-ins every member. */
  config: PolicyConfigInput;
  /** What evaluation uses: `config` over the contract defaults. */
  effective: PolicyConfig;
  created_at: string | null;
}

const viewOf = (record: PolicyRecord): PolicyView => ({
  name: record.name,
  description: record.description,
  builtin: false,
  config: record.config,
  effective: resolvePolicy(record.config),
  created_at: record.createdAt,
});

export class PolicyService {
  constructor(private readonly deps: { policies: PolicyStore; clock: Clock }) {}

  async list(): Promise<PolicyView[]> {
    const builtins = BUILTIN_POLICIES.map((p) => ({
      name: p.name,
      description: p.description,
      builtin: true,
      config: { ...p.config },
      effective: { ...p.config },
      created_at: null,
    }));
    return [...builtins, ...(await this.deps.policies.list()).map(viewOf)];
  }

  /** Policies are immutable: a taken name (built-in or custom) is a conflict, never an update. */
  async create(
    input: { name: string; description?: string; config: PolicyConfigInput },
    apiKeyId: string | null,
  ): Promise<PolicyView> {
    const conflict = () =>
      new SvcError(
        'policy_conflict',
        `A policy named ${JSON.stringify(input.name)} already exists; policies are immutable, choose another name`,
      );
    if (builtinPolicy(input.name)) throw conflict();
    const record: PolicyRecord = {
      name: input.name,
      description: input.description ?? null,
      config: input.config,
      apiKeyId,
      createdAt: new Date(this.deps.clock.now()).toISOString(),
    };
    if ((await this.deps.policies.insert(record)) === 'exists') throw conflict();
    return viewOf(record);
  }
}

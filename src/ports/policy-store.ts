import type { PolicyConfigInput } from '../core/policy-config.js';

export interface PolicyRecord {
  name: string;
  description: string | null;
  /** The config as created: policyConfig members, unset ones left to the defaults. */
  config: PolicyConfigInput;
  apiKeyId: string | null;
  createdAt: string;
}

/** Custom policies. Immutable once created: receipts refer to them by name. */
export interface PolicyStore {
  /** 'exists' when the name is taken, and nothing is written. */
  insert(record: PolicyRecord): Promise<'created' | 'exists'>;
  get(name: string): Promise<PolicyRecord | null>;
  list(): Promise<PolicyRecord[]>;
}

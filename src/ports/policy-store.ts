import type { OverrideMode } from '../core/policy-overrides.js';
import type { PolicyConfigInput } from '../core/policy-config.js';

export interface PolicyRecord {
  /** The owning account, or null for a shared policy an operator created. */
  owner: string | null;
  name: string;
  description: string | null;
  /** The config as created: policyConfig members, unset ones left to the defaults. */
  config: PolicyConfigInput;
  overrides: OverrideMode;
  createdAt: string;
}

/**
 * Custom policies, in one namespace per owner plus the shared one. A policy never changes
 * once created (receipts pin it by config_hash); its owner may delete it.
 */
export interface PolicyStore {
  /** 'exists' when the owner already has that name, and nothing is written. */
  insert(record: PolicyRecord): Promise<'created' | 'exists'>;
  get(owner: string | null, name: string): Promise<PolicyRecord | null>;
  /** Shared policies and, when given, the owner's own; by name. */
  listVisible(owner: string | null): Promise<PolicyRecord[]>;
  /** Every custom policy, for operators. */
  listAll(): Promise<PolicyRecord[]>;
  /** True when the owner's policy existed and is gone. */
  delete(owner: string | null, name: string): Promise<boolean>;
}

export const TIERS = ['free', 'pilot', 'enterprise'] as const;
export type Tier = (typeof TIERS)[number];

/**
 * What a key may read while reads are private (SVC_PUBLIC_READS=false): its own account's
 * receipts, or — given by the operator only — every receipt, as when reads are public.
 */
export const READERS = ['own', 'all'] as const;
export type Reader = (typeof READERS)[number];

/**
 * One API key. Keys of one account share `id`: a rotation issues a new key (new `keyId`,
 * new digest) for the same account and revokes the old one.
 */
export interface ApiKeyRecord {
  /** The account: stable across rotations; owns custom policies, rate-limit window, claim_ids. */
  id: string;
  /** Public identifier of this key (`kid_<ULID>`), random, never derived from the secret. */
  keyId: string;
  email: string;
  /** Lowercase hex SHA-256 of the raw key: the only form of the secret ever stored. */
  keyDigest: string;
  tier: Tier;
  /** The policy every claim of this key is evaluated under, when an operator locked it. */
  lockedPolicy: string | null;
  /** What the key reads while reads are private; kept across rotations. */
  reader: Reader;
  /**
   * Whether the key may record dispositions (decide escalations): granted by the operator
   * only, never by signup, so the gated agent cannot sign up a second address and approve
   * its own escalation. Kept across rotations.
   */
  reviewer: boolean;
  createdAt: string;
  updatedAt: string;
  revokedAt: string | null;
}

/** What closing an account changed besides the key. */
export interface AccountRevocation {
  /** The account's webhook receivers that were active and are now disabled. */
  receiversDisabled: number;
}

export interface ApiKeyStore {
  /** The key with this digest, revoked or not. */
  findByDigest(keyDigest: string): Promise<ApiKeyRecord | null>;
  findByKeyId(keyId: string): Promise<ApiKeyRecord | null>;
  /** The email's key that is not revoked, if any. */
  findActiveByEmail(email: string): Promise<ApiKeyRecord | null>;
  /** The email's newest key, revoked or not: whether the address ever had an account. */
  findLatestByEmail(email: string): Promise<ApiKeyRecord | null>;
  /** Inserts unless the email already has an active key; returns whichever record holds it. */
  insertIfAbsent(record: ApiKeyRecord): Promise<ApiKeyRecord>;
  /**
   * Atomically revokes `keyId` and inserts `next` (same account). Null, and nothing written,
   * when `keyId` is not an active key.
   */
  rotate(keyId: string, next: ApiKeyRecord, at: string): Promise<ApiKeyRecord | null>;
  /** True when the key was active and is now revoked. */
  revoke(keyId: string, at: string): Promise<boolean>;
  /**
   * Closes an account in one transaction: revokes `keyId` and disables every active webhook
   * receiver of its account (with `reason`, at `at`), so no receiver outlives its account and
   * no revocation is half done. Null, and nothing written, when `keyId` is not an active key.
   */
  revokeAccount(keyId: string, reason: string, at: string): Promise<AccountRevocation | null>;
  /** Changes the tier of the email's active key; null when it has none. */
  setTier(email: string, tier: Tier, updatedAt: string): Promise<ApiKeyRecord | null>;
  /** Changes what the email's active key reads; null when it has none. */
  setReader(email: string, reader: Reader, updatedAt: string): Promise<ApiKeyRecord | null>;
  /** Grants or withdraws the email's active key the reviewer capability; null when it has none. */
  setReviewer(email: string, reviewer: boolean, updatedAt: string): Promise<ApiKeyRecord | null>;
  /** Lifts the policy lock of the email's active key; null when it has none. */
  unlock(email: string, updatedAt: string): Promise<ApiKeyRecord | null>;
  /** Every key, active and revoked, oldest first. */
  list(): Promise<ApiKeyRecord[]>;
}

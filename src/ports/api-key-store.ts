export const TIERS = ['free', 'pilot', 'enterprise'] as const;
export type Tier = (typeof TIERS)[number];

export interface ApiKeyRecord {
  id: string;
  email: string;
  /** Lowercase hex SHA-256 of the raw key: the lookup handle. The raw key is never stored. */
  keyDigest: string;
  /** The raw key encrypted with AES-256-GCM under the server's key-encryption secret. */
  keyCiphertext: string;
  tier: Tier;
  createdAt: string;
  updatedAt: string;
}

export interface ApiKeyStore {
  findByDigest(keyDigest: string): Promise<ApiKeyRecord | null>;
  findByEmail(email: string): Promise<ApiKeyRecord | null>;
  /** Inserts unless the email already has a key; returns whichever record holds the email. */
  insertIfAbsent(record: ApiKeyRecord): Promise<ApiKeyRecord>;
  /** Returns the updated record, or null when no key belongs to the email. */
  setTier(email: string, tier: Tier, updatedAt: string): Promise<ApiKeyRecord | null>;
}

import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import type { ApiKeyRecord, ApiKeyStore, Tier } from '../ports/api-key-store.js';
import type { Clock } from '../ports/clock.js';
import type { SecretBox } from '../ports/secret-box.js';

export const API_KEY_PATTERN =
  /^sk_svc_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export const TIER_LIMITS: Readonly<Record<Tier, number>> = {
  free: 100,
  pilot: 10_000,
  enterprise: Number.POSITIVE_INFINITY,
};

const digestOf = (rawKey: string) => createHash('sha256').update(rawKey, 'utf8').digest('hex');

export const normalizeEmail = (email: string) => email.trim().toLowerCase();

export class ApiKeyService {
  constructor(private readonly deps: { keys: ApiKeyStore; box: SecretBox; clock: Clock }) {}

  /** Issues a free-tier key, or answers the key the email already has (the spec's rule). */
  async signup(email: string): Promise<{ apiKey: string; created: boolean; record: ApiKeyRecord }> {
    const normalized = normalizeEmail(email);
    const existing = await this.deps.keys.findByEmail(normalized);
    if (existing) return { apiKey: this.reveal(existing), created: false, record: existing };

    const apiKey = `sk_svc_${randomUUID()}`;
    const now = new Date(this.deps.clock.now()).toISOString();
    const candidate: ApiKeyRecord = {
      id: randomUUID(),
      email: normalized,
      keyDigest: digestOf(apiKey),
      keyCiphertext: this.deps.box.seal(apiKey, normalized),
      tier: 'free',
      createdAt: now,
      updatedAt: now,
    };
    const record = await this.deps.keys.insertIfAbsent(candidate);
    // A concurrent signup for the same email may have won: answer its key, not ours.
    if (record.id !== candidate.id) return { apiKey: this.reveal(record), created: false, record };
    return { apiKey, created: true, record };
  }

  /** The record of a raw key, or null for anything that is not a live key. */
  async authenticate(rawKey: string): Promise<ApiKeyRecord | null> {
    if (!API_KEY_PATTERN.test(rawKey)) return null;
    const digest = digestOf(rawKey);
    const record = await this.deps.keys.findByDigest(digest);
    if (!record) return null;
    // The index lookup already matched; the constant-time comparison keeps the final
    // decision free of data-dependent timing all the same.
    const ok = timingSafeEqual(Buffer.from(record.keyDigest, 'hex'), Buffer.from(digest, 'hex'));
    return ok ? record : null;
  }

  async setTier(email: string, tier: Tier): Promise<ApiKeyRecord | null> {
    return this.deps.keys.setTier(
      normalizeEmail(email),
      tier,
      new Date(this.deps.clock.now()).toISOString(),
    );
  }

  private reveal(record: ApiKeyRecord): string {
    return this.deps.box.open(record.keyCiphertext, record.email);
  }
}

import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import { SvcError } from '../core/errors.js';
import { newKeyId } from '../core/ids.js';
import type { ApiKeyRecord, ApiKeyStore, Tier } from '../ports/api-key-store.js';
import type { Clock } from '../ports/clock.js';

export const API_KEY_PATTERN =
  /^sk_svc_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export const TIER_LIMITS: Readonly<Record<Tier, number>> = {
  free: 100,
  pilot: 10_000,
  enterprise: Number.POSITIVE_INFINITY,
};

const digestOf = (rawKey: string) => createHash('sha256').update(rawKey, 'utf8').digest('hex');

export const normalizeEmail = (email: string) => email.trim().toLowerCase();

export interface IssuedKey {
  apiKey: string;
  record: ApiKeyRecord;
}

/**
 * API keys. The raw key exists only in the response that issues it: the store keeps its
 * SHA-256 digest, so a copy of the database lets no one act as a key holder.
 */
export class ApiKeyService {
  constructor(private readonly deps: { keys: ApiKeyStore; clock: Clock }) {}

  /**
   * Issues a key for an email that has none. An email with an active key is 409
   * `email_registered` (contract §7): handing its key to whoever asks would hand over the
   * account. Emails compare trimmed and case-folded.
   */
  async signup(email: string): Promise<IssuedKey> {
    return this.create({ email, tier: 'free', lockedPolicy: null });
  }

  /** Operator issue: any tier, optionally locked to a policy. */
  async create(input: {
    email: string;
    tier: Tier;
    lockedPolicy: string | null;
  }): Promise<IssuedKey> {
    const email = normalizeEmail(input.email);
    const registered = () =>
      new SvcError(
        'email_registered',
        'This e-mail address already has an API key. Rotate it with POST /v1/account/rotate, or ask the operator to replace a lost key.',
      );
    if (await this.deps.keys.findActiveByEmail(email)) throw registered();
    const { apiKey, record } = this.newKey({
      id: randomUUID(),
      email,
      tier: input.tier,
      lockedPolicy: input.lockedPolicy,
    });
    const stored = await this.deps.keys.insertIfAbsent(record);
    // A concurrent signup for the same email won the race.
    if (stored.keyId !== record.keyId) throw registered();
    return { apiKey, record };
  }

  /** The record of a raw key, or null for anything that is not a live key. */
  async authenticate(rawKey: string): Promise<ApiKeyRecord | null> {
    if (!API_KEY_PATTERN.test(rawKey)) return null;
    const digest = digestOf(rawKey);
    const record = await this.deps.keys.findByDigest(digest);
    if (!record || record.revokedAt !== null) return null;
    // The index lookup already matched; the constant-time comparison keeps the final
    // decision free of data-dependent timing all the same.
    const ok = timingSafeEqual(Buffer.from(record.keyDigest, 'hex'), Buffer.from(digest, 'hex'));
    return ok ? record : null;
  }

  /** A new key for the same account (tier, lock and ownership kept); the old one is revoked. */
  async rotate(current: ApiKeyRecord): Promise<IssuedKey> {
    const { apiKey, record } = this.newKey(current);
    const stored = await this.deps.keys.rotate(current.keyId, record, this.now());
    if (!stored) throw new SvcError('unauthorized', 'This API key was revoked');
    return { apiKey, record: stored };
  }

  async revoke(keyId: string): Promise<boolean> {
    return this.deps.keys.revoke(keyId, this.now());
  }

  async setTier(email: string, tier: Tier): Promise<ApiKeyRecord | null> {
    return this.deps.keys.setTier(normalizeEmail(email), tier, this.now());
  }

  /** An active key by its key_id or its account's email, for operator commands. */
  async findActive(keyIdOrEmail: string): Promise<ApiKeyRecord | null> {
    const record = keyIdOrEmail.startsWith('kid_')
      ? await this.deps.keys.findByKeyId(keyIdOrEmail)
      : await this.deps.keys.findActiveByEmail(normalizeEmail(keyIdOrEmail));
    return record && record.revokedAt === null ? record : null;
  }

  private newKey(base: Pick<ApiKeyRecord, 'id' | 'email' | 'tier' | 'lockedPolicy'>): IssuedKey {
    const apiKey = `sk_svc_${randomUUID()}`;
    const now = this.now();
    return {
      apiKey,
      record: {
        id: base.id,
        keyId: newKeyId(),
        email: base.email,
        keyDigest: digestOf(apiKey),
        tier: base.tier,
        lockedPolicy: base.lockedPolicy,
        createdAt: now,
        updatedAt: now,
        revokedAt: null,
      },
    };
  }

  private now(): string {
    return new Date(this.deps.clock.now()).toISOString();
  }
}

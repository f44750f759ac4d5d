import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import { SvcError } from '../core/errors.js';
import { newKeyId } from '../core/ids.js';
import type {
  AccountRevocation,
  ApiKeyRecord,
  ApiKeyStore,
  Reader,
  Tier,
} from '../ports/api-key-store.js';
import type { Clock } from '../ports/clock.js';
import { ExpiringCache } from './expiring-cache.js';

export const API_KEY_PATTERN =
  /^sk_svc_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export const TIER_LIMITS: Readonly<Record<Tier, number>> = {
  free: 100,
  pilot: 10_000,
  enterprise: Number.POSITIVE_INFINITY,
};

const digestOf = (rawKey: string) => createHash('sha256').update(rawKey, 'utf8').digest('hex');

export const normalizeEmail = (email: string) => email.trim().toLowerCase();

/** The reason recorded on the webhook receivers of a revoked account. */
export const ACCOUNT_REVOKED = 'account revoked';

export interface IssuedKey {
  apiKey: string;
  record: ApiKeyRecord;
}

/**
 * How long an authenticated key's record is reused without asking the store, and how many
 * are kept. A tier change or revocation made elsewhere (the operator CLI, another worker
 * process) takes effect within this bound; rotation and revocation through this process's
 * API take effect at once. Documented in docs/API.md and docs/SECURITY.md.
 */
export const AUTH_CACHE_TTL_MS = 5_000;
export const AUTH_CACHE_MAX_KEYS = 4_096;

/**
 * API keys. The raw key exists only in the response that issues it: the store keeps its
 * SHA-256 digest, so a copy of the database lets no one act as a key holder.
 */
export class ApiKeyService {
  // By digest. Only live keys are cached: an unknown or revoked key asks the store every time.
  private readonly cache: ExpiringCache<ApiKeyRecord>;

  constructor(
    private readonly deps: {
      keys: ApiKeyStore;
      clock: Clock;
      /** Bounds of the authentication cache; 0 turns it off. */
      cache?: { ttlMs?: number; maxKeys?: number };
    },
  ) {
    this.cache = new ExpiringCache(
      deps.cache?.ttlMs ?? AUTH_CACHE_TTL_MS,
      deps.cache?.maxKeys ?? AUTH_CACHE_MAX_KEYS,
    );
  }

  /** Keys held by the authentication cache now (for tests of its bound). */
  get cachedKeys(): number {
    return this.cache.size;
  }

  /**
   * Issues a key for an email that has none. An email with an active key is 409
   * `email_registered` (contract §7): handing its key to whoever asks would hand over the
   * account. Emails compare trimmed and case-folded.
   */
  async signup(email: string): Promise<IssuedKey> {
    // An address whose account was revoked stays taken: a fresh self-service account would
    // shed what the operator set on the old one (a policy lock, a reader), and the old
    // account's receipts stay its own. Only the operator issues it a key again.
    const latest = await this.deps.keys.findLatestByEmail(normalizeEmail(email));
    if (latest && latest.revokedAt !== null)
      throw new SvcError(
        'email_registered',
        'This e-mail address belongs to an account that was revoked. Ask the operator for a new key.',
      );
    return this.create({ email, tier: 'free', lockedPolicy: null });
  }

  /** Operator issue: any tier, optionally locked to a policy, optionally reading everything. */
  async create(input: {
    email: string;
    tier: Tier;
    lockedPolicy: string | null;
    reader?: Reader;
    /** May record dispositions: the operator's grant, never signup's. */
    reviewer?: boolean;
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
      reader: input.reader ?? 'own',
      reviewer: input.reviewer ?? false,
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
    const now = this.deps.clock.now();
    // The cache is keyed by the digest just computed from the presented key: a hit is a
    // match of the full digest, as the store's index lookup is.
    const cached = this.cache.get(digest, now);
    if (cached) return cached;
    const record = await this.deps.keys.findByDigest(digest);
    if (!record || record.revokedAt !== null) return null;
    // The index lookup already matched; the constant-time comparison keeps the final
    // decision free of data-dependent timing all the same.
    const ok = timingSafeEqual(Buffer.from(record.keyDigest, 'hex'), Buffer.from(digest, 'hex'));
    if (!ok) return null;
    this.cache.set(digest, record, now);
    return record;
  }

  /** A new key for the same account (tier, lock, reader, reviewer and ownership kept); the old one is revoked. */
  async rotate(current: ApiKeyRecord): Promise<IssuedKey> {
    const { apiKey, record } = this.newKey(current);
    const stored = await this.deps.keys.rotate(current.keyId, record, this.now());
    // After the write: a lookup that raced it cannot leave the old record cached.
    this.forget((r) => r.keyId === current.keyId);
    if (!stored) throw new SvcError('unauthorized', 'This API key was revoked');
    return { apiKey, record: stored };
  }

  /**
   * The key holder closing its own account (`revokeAccount`). A key locked to a policy may not: the lock
   * belongs to the account, and closing it would let the holder sign up again unlocked. Only
   * the operator revokes it (`revoke`).
   */
  async revokeOwn(key: ApiKeyRecord): Promise<boolean> {
    if (key.lockedPolicy !== null)
      throw new SvcError(
        'locked_key',
        `This key is locked to the policy "${key.lockedPolicy}": only the operator can revoke it`,
      );
    return this.revoke(key.keyId);
  }

  /** Operator revocation, of any key: closes its account (`revokeAccount`). */
  async revoke(keyId: string): Promise<boolean> {
    return (await this.revokeAccount(keyId)) !== null;
  }

  /**
   * Closes the account of an active key, in one store transaction: the key is revoked and the
   * account's webhook receivers are disabled, so whoever held the key stops receiving its
   * receipts. Null, and nothing changed, when the key is not active.
   */
  async revokeAccount(keyId: string): Promise<AccountRevocation | null> {
    const closed = await this.deps.keys.revokeAccount(keyId, ACCOUNT_REVOKED, this.now());
    this.forget((r) => r.keyId === keyId);
    return closed;
  }

  async setTier(email: string, tier: Tier): Promise<ApiKeyRecord | null> {
    const normalized = normalizeEmail(email);
    const record = await this.deps.keys.setTier(normalized, tier, this.now());
    this.forget((r) => r.email === normalized);
    return record;
  }

  /** What the email's active key reads while reads are private (operator only). */
  async setReader(email: string, reader: Reader): Promise<ApiKeyRecord | null> {
    const normalized = normalizeEmail(email);
    const record = await this.deps.keys.setReader(normalized, reader, this.now());
    this.forget((r) => r.email === normalized);
    return record;
  }

  /** Grants or withdraws the reviewer capability of the email's active key (operator only). */
  async setReviewer(email: string, reviewer: boolean): Promise<ApiKeyRecord | null> {
    const normalized = normalizeEmail(email);
    const record = await this.deps.keys.setReviewer(normalized, reviewer, this.now());
    this.forget((r) => r.email === normalized);
    return record;
  }

  /** Lifts the policy lock of the email's active key (operator only). */
  async unlock(email: string): Promise<ApiKeyRecord | null> {
    const normalized = normalizeEmail(email);
    const record = await this.deps.keys.unlock(normalized, this.now());
    this.forget((r) => r.email === normalized);
    return record;
  }

  /** Drops cached records at once, for changes made through this process. */
  private forget(matches: (record: ApiKeyRecord) => boolean): void {
    this.cache.deleteWhere(matches);
  }

  /** An active key by its key_id or its account's email, for operator commands. */
  async findActive(keyIdOrEmail: string): Promise<ApiKeyRecord | null> {
    const record = keyIdOrEmail.startsWith('kid_')
      ? await this.deps.keys.findByKeyId(keyIdOrEmail)
      : await this.deps.keys.findActiveByEmail(normalizeEmail(keyIdOrEmail));
    return record && record.revokedAt === null ? record : null;
  }

  /**
   * Every key of a key_id or of an account's email, revoked ones included, oldest first, for
   * operator commands.
   */
  async findAny(keyIdOrEmail: string): Promise<ApiKeyRecord[]> {
    if (keyIdOrEmail.startsWith('kid_')) {
      const record = await this.deps.keys.findByKeyId(keyIdOrEmail);
      return record ? [record] : [];
    }
    const email = normalizeEmail(keyIdOrEmail);
    return (await this.deps.keys.list()).filter((record) => record.email === email);
  }

  private newKey(
    base: Pick<ApiKeyRecord, 'id' | 'email' | 'tier' | 'lockedPolicy' | 'reader' | 'reviewer'>,
  ): IssuedKey {
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
        reader: base.reader,
        reviewer: base.reviewer,
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

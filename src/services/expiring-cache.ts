/**
 * A bounded map whose entries expire, for answers a service may reuse for a short time
 * instead of asking the store again: the least recently used entry leaves first once it is
 * full, and an expired one is dropped when it is next looked up. A `ttlMs` or `max` of 0 keeps
 * nothing. The caller gives the time (its clock), so tests move it by hand.
 */
export class ExpiringCache<V> {
  // Least recently used first: a Map keeps insertion order, and a hit re-inserts.
  private readonly entries = new Map<string, { value: V; expiresAt: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly max: number,
  ) {}

  /** Entries held now (for tests of the bound). */
  get size(): number {
    return this.entries.size;
  }

  /** The value of `key` if it has not expired at `now`; undefined otherwise. */
  get(key: string, now: number): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    if (entry.expiresAt <= now) return undefined;
    this.entries.set(key, entry);
    return entry.value;
  }

  set(key: string, value: V, now: number): void {
    if (this.ttlMs <= 0 || this.max <= 0) return;
    this.entries.delete(key);
    this.entries.set(key, { value, expiresAt: now + this.ttlMs });
    while (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value!);
  }

  /** Drops every entry whose value matches, at once. */
  deleteWhere(matches: (value: V) => boolean): void {
    for (const [key, entry] of this.entries) if (matches(entry.value)) this.entries.delete(key);
  }
}

import {
  KEY_REVOCATION_TYPE,
  KEY_TRANSITION_TYPE,
  pemFromRawPublicKey,
  rawPublicKeyFromPem,
  type SigningKeyRecord,
  toBase64,
  verifierKey,
} from '@svc/verify';
import { signRevocation, signTransition } from '../core/key-history.js';
import { SvcError } from '../core/errors.js';
import type { Clock } from '../ports/clock.js';
import type { ServerKey } from '../ports/signer.js';
import type { SigningKeyState, SigningKeyStore } from '../ports/signing-key-store.js';

/** A key of the history with a usable public key, as verification needs it. */
export interface HistoryKey {
  keyId: string;
  raw: Uint8Array;
  record: SigningKeyRecord;
}

/** Refusals an operator can act on (at start, or from the CLI). */
export class SigningKeyError extends Error {}

const newest = (history: SigningKeyRecord[]) => history[history.length - 1];

/**
 * The ledger's signing-key history (contract §9): registering the server's key at start,
 * rotating to a new key with a transition statement signed by the old one, revoking a
 * compromised key from a sequence, and the keys verification may use.
 */
interface ReadHistory {
  ids: string[];
  keys: HistoryKey[];
}

export class SigningKeyService {
  // The history as last read, for readers that may see a change a few seconds late.
  private cached: { at: number; history: Promise<ReadHistory> } | null = null;

  constructor(
    private readonly deps: {
      store: SigningKeyStore;
      clock: Clock;
      origin: string;
      /**
       * How long verificationKeys() may answer from what it last read (default 0: always
       * read). The history changes only when a service starts with a new key or the
       * operator's CLI records a rotation or revocation; every verify reads it otherwise.
       */
      cacheMs?: number;
    },
  ) {}

  private now(): string {
    return new Date(this.deps.clock.now()).toISOString();
  }

  private record(
    key: Pick<ServerKey, 'keyId' | 'publicKeyRaw'>,
    fields: Pick<SigningKeyRecord, 'status' | 'first_sequence' | 'activated_at' | 'transition'> &
      Partial<SigningKeyRecord>,
  ): SigningKeyRecord {
    return {
      key_id: key.keyId,
      public_key_pem: pemFromRawPublicKey(key.publicKeyRaw),
      verifier_key: verifierKey({ name: this.deps.origin, publicKey: key.publicKeyRaw }),
      last_sequence: null,
      retired_at: null,
      revoked_from_sequence: null,
      revoked_at: null,
      revocation: null,
      ...fields,
    };
  }

  list(): Promise<SigningKeyRecord[]> {
    return this.deps.store.list();
  }

  /** Every key of the history that has a public key, for verification. */
  async verificationKeys(): Promise<HistoryKey[]> {
    return (await this.readHistory()).keys;
  }

  /** Every key id of the history, with or without a public key (cached like the keys). */
  async keyIds(): Promise<string[]> {
    return (await this.readHistory()).ids;
  }

  private readHistory(): Promise<ReadHistory> {
    const cacheMs = this.deps.cacheMs ?? 0;
    const now = this.deps.clock.now();
    if (this.cached && now - this.cached.at < cacheMs) return this.cached.history;
    const history = this.list().then((records) => ({
      ids: records.map((r) => r.key_id),
      keys: records.flatMap((record) => {
        const raw =
          record.public_key_pem === null ? null : rawPublicKeyFromPem(record.public_key_pem);
        return raw ? [{ keyId: record.key_id, raw, record }] : [];
      }),
    }));
    // A failed read is not kept: the next call reads again.
    if (cacheMs > 0) {
      this.cached = { at: now, history };
      history.catch(() => (this.cached = null));
    }
    return history;
  }

  /** Whether `keyId` is the current key (true for an empty history: nothing decided yet). */
  async isCurrent(keyId: string): Promise<boolean> {
    const history = await this.list();
    return (
      history.length === 0 || history.some((k) => k.key_id === keyId && k.status === 'current')
    );
  }

  /**
   * At start: the server's key must be the history's current key. An empty history adopts the
   * ledger's existing receipts first — one entry per run of receipts signed by one key, in
   * sequence order, the last of them ending at the head — then takes the server's key as
   * current (from sequence 1 when it signed the first receipts, else from head + 1).
   * Throws SigningKeyError, with what to do, for a retired, revoked or unknown key.
   */
  async register(key: ServerKey): Promise<SigningKeyRecord[]> {
    this.cached = null;
    const history = await this.deps.store.change((state) => {
      if (state.history.length > 0) return {};
      return { insert: this.adopt(state, key) };
    });
    const mine = history.find((k) => k.key_id === key.keyId);
    const current = history.find((k) => k.status === 'current');
    if (mine?.status === 'current') return history;
    if (mine) {
      throw new SigningKeyError(
        `the signing key ${key.keyId} is ${mine.status} in this ledger's key history${
          current ? `; the current key is ${current.key_id}` : ''
        }: start the service with the current key (signing-key.pem in the data directory, or SVC_SIGNING_KEY)${
          current ? '' : ', after svc signing-key rotate'
        }`,
      );
    }
    throw new SigningKeyError(
      `the signing key ${key.keyId} is not in this ledger's key history (current: ${
        current?.key_id ?? 'none'
      }): start with the current key; to change keys, use svc signing-key rotate`,
    );
  }

  private adopt(state: SigningKeyState, key: ServerKey): SigningKeyRecord[] {
    const runs = state.receiptKeyRuns();
    const now = this.now();
    const records: SigningKeyRecord[] = [];
    // A key that signed several separate runs is one entry: its first to its last sequence.
    for (const run of runs) {
      const seen = records.find((r) => r.key_id === run.key_id);
      if (seen) {
        seen.last_sequence = run.last_sequence;
        continue;
      }
      records.push({
        key_id: run.key_id,
        public_key_pem: null,
        verifier_key: null,
        status: 'retired',
        first_sequence: run.first_sequence,
        last_sequence: run.last_sequence,
        activated_at: run.first_issued_at,
        retired_at: now,
        revoked_from_sequence: null,
        revoked_at: null,
        transition: null,
        revocation: null,
      });
    }
    const last = records[records.length - 1];
    if (last?.key_id === key.keyId) {
      // The server's own key signed the newest receipts: it stays current, with its public key.
      records[records.length - 1] = this.record(key, {
        status: 'current',
        first_sequence: last.first_sequence,
        activated_at: last.activated_at,
        transition: null,
      });
      return records.filter((r, i) => i === records.length - 1 || r.key_id !== key.keyId);
    }
    return [
      ...records.filter((r) => r.key_id !== key.keyId),
      this.record(key, {
        status: 'current',
        first_sequence: state.head + 1,
        activated_at: now,
        transition: null,
      }),
    ];
  }

  /**
   * Makes `next` the current key from the sequence after the head, retires the newest key at
   * the head, and stores the transition statement `previous` signs. Atomic with the head:
   * appends signed by `previous` are refused from then on (the store checks each append).
   */
  async rotate(previous: ServerKey, next: ServerKey): Promise<SigningKeyRecord[]> {
    this.cached = null;
    return this.deps.store.change((state) => {
      const last = newest(state.history);
      if (!last)
        throw new SigningKeyError('the key history is empty: start the service once first');
      if (last.key_id !== previous.keyId)
        throw new SigningKeyError(
          `the newest key of the history is ${last.key_id}, but the key given to sign the transition is ${previous.keyId}`,
        );
      if (state.history.some((k) => k.key_id === next.keyId))
        throw new SigningKeyError(`the new key ${next.keyId} is already in the history`);
      const at = this.now();
      const first = state.head + 1;
      const transition = signTransition(
        {
          type: KEY_TRANSITION_TYPE,
          log: this.deps.origin,
          previous_key_id: previous.keyId,
          new_key_id: next.keyId,
          new_public_key: toBase64(next.publicKeyRaw),
          first_sequence: first,
          issued_at: at,
        },
        (message) => previous.sign(message),
      );
      return {
        retire: { key_id: last.key_id, last_sequence: state.head, retired_at: at },
        insert: [
          this.record(next, {
            status: 'current',
            first_sequence: first,
            activated_at: at,
            transition,
          }),
        ],
      };
    });
  }

  /**
   * Marks `keyId` revoked: its receipts at or after `fromSequence` fail verification. `signer`,
   * the newest key of the history (the service's own), signs the revocation statement, so that
   * a verifier trusting that key can hold a served history to it.
   */
  async revoke(
    keyId: string,
    fromSequence: number,
    signer: ServerKey,
  ): Promise<SigningKeyRecord[]> {
    this.cached = null;
    return this.deps.store.change((state) => {
      const key = state.history.find((k) => k.key_id === keyId);
      if (!key) throw new SvcError('not_found', `no key ${keyId} in the history`);
      const last = newest(state.history)!;
      // The newest key is trusted by every verifier whose pin reaches the revoked key.
      if (last.key_id !== signer.keyId)
        throw new SigningKeyError(
          `the newest key of the history is ${last.key_id}, but the key given to sign the revocation is ${signer.keyId}`,
        );
      if (key.status === 'revoked')
        throw new SvcError(
          'validation_failed',
          `key ${keyId} is already revoked from ${key.revoked_from_sequence}`,
        );
      const end = key.last_sequence ?? state.head + 1;
      if (
        !Number.isSafeInteger(fromSequence) ||
        fromSequence < key.first_sequence ||
        fromSequence > end
      )
        throw new SvcError(
          'validation_failed',
          `--from-sequence must be from ${key.first_sequence} to ${end} (the sequences key ${keyId} signed${key.last_sequence === null ? ', or the next one' : ''})`,
        );
      const at = this.now();
      const revocation = signRevocation(
        {
          type: KEY_REVOCATION_TYPE,
          log: this.deps.origin,
          key_id: keyId,
          revoked_from_sequence: fromSequence,
          signer_key_id: signer.keyId,
          issued_at: at,
        },
        (message) => signer.sign(message),
      );
      return {
        revoke: { key_id: keyId, revoked_from_sequence: fromSequence, revoked_at: at, revocation },
      };
    });
  }
}

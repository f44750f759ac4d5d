import { ulid } from 'ulid';

/** The form of an API key's key_id: `kid_` and a ULID. */
export const KEY_ID_PATTERN = /^kid_[0-9A-HJKMNP-TV-Z]{26}$/;

/** A public API-key identifier: random, never derived from the secret (contract §8). */
export const newKeyId = (): string => `kid_${ulid()}`;

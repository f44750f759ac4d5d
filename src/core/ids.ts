import { ulid } from 'ulid';

/** A public API-key identifier: random, never derived from the secret (contract §8). */
export const newKeyId = (): string => `kid_${ulid()}`;

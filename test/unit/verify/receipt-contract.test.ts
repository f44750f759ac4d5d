import { describe, expect, it } from '@jest/globals';
import { proceeds } from '@svc/verify';
import { ADMISSIBILITY_STATUSES, VERDICTS } from '../../../src/core/receipt-schema.js';

describe('proceeds', () => {
  it('is true for verdict ALLOWED with admissibility ACCEPTED, and for nothing else', () => {
    const table = VERDICTS.flatMap((verdict) =>
      ADMISSIBILITY_STATUSES.map((status) => [verdict, status, proceeds(verdict, status)]),
    );
    expect(table.filter(([, , go]) => go)).toEqual([['ALLOWED', 'ACCEPTED', true]]);
    expect(table).toHaveLength(9);
  });

  it('is false for values that are not the exact strings, as an attacker-made receipt may hold', () => {
    for (const [verdict, status] of [
      ['allowed', 'ACCEPTED'],
      ['ALLOWED', 'accepted'],
      ['ALLOWED ', 'ACCEPTED'],
      [null, 'ACCEPTED'],
      ['ALLOWED', undefined],
      [['ALLOWED'], 'ACCEPTED'],
      [{ toString: () => 'ALLOWED' }, 'ACCEPTED'],
      [true, true],
    ] as const)
      expect(proceeds(verdict, status)).toBe(false);
  });
});

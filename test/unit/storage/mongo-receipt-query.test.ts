import { describe, expect, it } from '@jest/globals';
import { ftsQuery } from '../../../src/storage/sqlite/sqlite-ledger-queries.js';
import { receiptWords, searchQuery, tokenize } from '../../../src/storage/mongo/receipt-query.js';

const asc = { limit: 10, order: 'asc' as const };

describe('MongoDB receipt search translation', () => {
  it('tokenizes like FTS5 unicode61: letters and digits, lower case, no diacritics', () => {
    expect(tokenize('Merge PR #42 after CI passed')).toEqual([
      'merge',
      'pr',
      '42',
      'after',
      'ci',
      'passed',
    ]);
    expect(tokenize('Café acme/web-app_v2')).toEqual(['cafe', 'acme', 'web', 'app', 'v2']);
    expect(tokenize('… ---')).toEqual([]);
  });

  it('indexes the distinct words of claim text, entity, repository and agent', () => {
    expect(receiptWords(['Merge web', 'acme/web', null, undefined, 'Coder-Bot'])).toEqual([
      'merge',
      'web',
      'acme',
      'coder',
      'bot',
    ]);
  });

  it('an empty filter is every receipt in sequence order, either way', () => {
    expect(searchQuery({}, asc)).toEqual({ filter: {}, sort: { sequence: 1 } });
    expect(searchQuery({}, { limit: 5, order: 'desc' })).toEqual({
      filter: {},
      sort: { sequence: -1 },
    });
  });

  it('ANDs every word of q as a prefix of an indexed word', () => {
    expect(searchQuery({ q: 'Merg  CI' }, asc)!.filter).toEqual({
      $and: [{ words: /^merg/ }, { words: /^ci/ }],
    });
  });

  it('a word that splits into tokens is a phrase in one field, the last token a prefix (FTS5 phrase prefix)', () => {
    // The SQLite store's FTS query for the same input, for reference.
    expect(ftsQuery('acme/we')).toBe('"acme/we"*');
    expect(searchQuery({ q: 'acme/we' }, asc)!.filter).toEqual({
      $and: [
        { words: 'acme' },
        { words: /^we/ },
        // Receipts stored before `phrases` existed keep the looser match of their words.
        { $or: [{ phrases: /(?:^| )acme we/ }, { phrases: { $exists: false } }] },
      ],
    });
  });

  it('tokenizes other scripts as FTS5 does: only Latin letters lose their marks', () => {
    expect(tokenize('Ελληνικό όνομα')).toEqual(['ελληνικό', 'όνομα']);
    expect(tokenize('किताब')).toEqual(['क', 'त', 'ब']);
    // Final sigma folded as FTS5 folds it; Greek accents kept.
    expect(tokenize('ΟΔΟΣ οδός')).toEqual(['οδοσ', 'οδόσ']);
    expect(tokenize('Crème Brûlée ÉCOLE')).toEqual(['creme', 'brulee', 'ecole']);
  });

  it('answers null (no receipts) for a q without any letter or digit, like the SQLite store', () => {
    expect(searchQuery({ q: '  -- ' }, asc)).toBeNull();
    expect(ftsQuery('  -- ')).toBe('');
  });

  it('user input never becomes regex syntax', () => {
    const { filter } = searchQuery({ q: 'a.*b (c|d) $e^' }, asc)!;
    const sources: string[] = [];
    JSON.stringify(filter, (_k, v: unknown) => {
      // Without the phrase's own start anchor, what is left came from the input.
      if (v instanceof RegExp) sources.push(v.source.replace('(?:^| )', ''));
      return v;
    });
    const regexes = sources.join(' ');
    expect(sources).toHaveLength(5);
    expect(regexes).not.toMatch(/\.\*|\(|\||\$e|\^\^/);
    expect(filter).toEqual({
      $and: [
        { words: 'a' },
        { words: /^b/ },
        { words: 'c' },
        { words: /^d/ },
        { words: /^e/ },
        { $or: [{ phrases: /(?:^| )a b/ }, { phrases: { $exists: false } }] },
        { $or: [{ phrases: /(?:^| )c d/ }, { phrases: { $exists: false } }] },
      ],
    });
  });

  it('maps the equality filters and the half-open issued_at range', () => {
    expect(
      searchQuery(
        {
          agent: 'bot',
          repository: 'acme/web',
          verdict: 'BLOCKED',
          status: 'REJECTED',
          since: '2026-01-01T00:00:00.000Z',
          until: '2026-02-01T00:00:00.000Z',
        },
        asc,
      )!.filter,
    ).toEqual({
      $and: [
        { agent: 'bot' },
        { repository: 'acme/web' },
        { verdict: 'BLOCKED' },
        { admissibility: 'REJECTED' },
        { issued_at: { $gte: '2026-01-01T00:00:00.000Z', $lt: '2026-02-01T00:00:00.000Z' } },
      ],
    });
    expect(searchQuery({ since: '2026-01-01' }, asc)!.filter).toEqual({
      issued_at: { $gte: '2026-01-01' },
    });
  });

  it('continues after the cursor in the listing order', () => {
    expect(searchQuery({}, { ...asc, after: 7 })!.filter).toEqual({ sequence: { $gt: 7 } });
    expect(searchQuery({ verdict: 'ALLOWED' }, { limit: 3, order: 'desc', after: 7 })).toEqual({
      filter: { $and: [{ verdict: 'ALLOWED' }, { sequence: { $lt: 7 } }] },
      sort: { sequence: -1 },
    });
  });
});

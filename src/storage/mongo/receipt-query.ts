import type { Filter, Sort } from 'mongodb';
import type { ReceiptFilter, SequencePage } from '../../ports/ledger-queries.js';
import type { ReceiptDocument } from './documents.js';

/**
 * The words of a text as the SQLite store's FTS5 `unicode61` tokenizer sees them: runs of
 * letters and digits, lower-cased, diacritics removed ("Café" → "cafe").
 */
export function tokenize(text: string): string[] {
  return (
    text
      .normalize('NFD')
      .replace(/\p{M}+/gu, '')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? []
  );
}

/** The distinct words indexed for a receipt: claim text, entity, repository and agent. */
export function receiptWords(fields: (string | null | undefined)[]): string[] {
  return [...new Set(fields.flatMap((field) => (field ? tokenize(field) : [])))];
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export interface SearchQuery {
  filter: Filter<ReceiptDocument>;
  sort: Sort;
}

/**
 * Translates a ReceiptFilter and page into a MongoDB query on the receipts collection, or null
 * when `q` holds no word (the SQLite store then answers nothing either).
 *
 * `q` is matched the way the SQLite store's FTS5 query is: every whitespace-separated word
 * must match (AND), as a prefix. A query word that itself splits into several tokens
 * ("acme/we") needs each token, the last one as a prefix. MongoDB's `$text` cannot answer
 * this — it matches whole stemmed words, so "merg" would not find "merge" — hence the
 * multikey index on `words`, which an anchored, case-sensitive regex uses as a range scan.
 * User input only ever becomes escaped regex literals of letters and digits.
 */
export function searchQuery(filter: ReceiptFilter, page: SequencePage): SearchQuery | null {
  const and: Filter<ReceiptDocument>[] = [];
  if (filter.q !== undefined) {
    const words = filter.q.split(/[\s\p{Cc}]+/u).filter((word) => /[\p{L}\p{N}]/u.test(word));
    if (words.length === 0) return null;
    const terms = new Map<string, RegExp | string>();
    for (const word of words) {
      const tokens = tokenize(word);
      tokens.forEach((token, i) => {
        const prefix = i === tokens.length - 1;
        const key = `${prefix ? 'p' : 'w'}:${token}`;
        if (!terms.has(key)) terms.set(key, prefix ? new RegExp(`^${escapeRegExp(token)}`) : token);
      });
    }
    for (const term of terms.values()) and.push({ words: term });
  }
  if (filter.agent !== undefined) and.push({ agent: filter.agent });
  if (filter.repository !== undefined) and.push({ repository: filter.repository });
  if (filter.verdict !== undefined) and.push({ verdict: filter.verdict });
  if (filter.status !== undefined) and.push({ admissibility: filter.status });
  const issuedAt: { $gte?: string; $lt?: string } = {};
  if (filter.since !== undefined) issuedAt.$gte = filter.since;
  if (filter.until !== undefined) issuedAt.$lt = filter.until;
  if (Object.keys(issuedAt).length > 0) and.push({ issued_at: issuedAt });
  if (page.after !== undefined) {
    and.push({ sequence: page.order === 'asc' ? { $gt: page.after } : { $lt: page.after } });
  }
  const query: Filter<ReceiptDocument> =
    and.length === 0 ? {} : and.length === 1 ? and[0]! : { $and: and };
  return { filter: query, sort: { sequence: page.order === 'asc' ? 1 : -1 } };
}

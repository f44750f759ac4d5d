import type { Filter, Sort } from 'mongodb';
import type { ReceiptFilter, SequencePage } from '../../ports/ledger-queries.js';
import type { LedgerEntry } from '../../ports/ledger-store.js';
import type { ReceiptDocument } from './documents.js';

/**
 * The words of a text as the SQLite store's FTS5 `unicode61 remove_diacritics 2` tokenizer
 * sees them: runs of letters and digits, lower-cased, with the diacritics of Latin letters
 * removed ("Café" → "cafe"). Marks on letters of other scripts are not removed: FTS5 treats
 * them as separators ("किताब" → "क", "त", "ब"), and so does the split on letters and digits.
 */
export function tokenize(text: string): string[] {
  return (
    text
      .normalize('NFD')
      .replace(/(\p{Script=Latin})\p{M}+/gu, '$1')
      .normalize('NFC')
      .toLowerCase()
      // FTS5 folds the final sigma as it folds case.
      .replace(/ς/g, 'σ')
      .match(/[\p{L}\p{N}]+/gu) ?? []
  );
}

/** What a receipt is searched by, as the SQLite store's word index holds it. */
export const indexedFields = ({ claim, receipt }: LedgerEntry): (string | null)[] => [
  claim.claim,
  claim.entity,
  receipt.subject.repository ?? null,
  receipt.subject.agent ?? null,
];

/** The distinct words indexed for a receipt: claim text, entity, repository and agent. */
export function receiptWords(fields: (string | null | undefined)[]): string[] {
  return [...new Set(fields.flatMap((field) => (field ? tokenize(field) : [])))];
}

/**
 * Each field's words in order, separated by one space: what a query word of several tokens
 * ("acme/we") must match as a phrase, within one field, as FTS5 matches `"acme/we"*`.
 */
export function receiptPhrases(fields: (string | null | undefined)[]): string[] {
  return fields.flatMap((field) => (field ? [tokenize(field).join(' ')] : []));
}

/**
 * The field a deployment receipt's document carries for the deployment pages: its
 * environment ('' when the claim names none); undefined, so absent, for any other receipt.
 */
export const deploymentEnvironmentOf = ({ receipt }: LedgerEntry): string | undefined =>
  receipt.subject.action_type === 'deployment' ? (receipt.subject.environment ?? '') : undefined;

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
 * ("acme/we") is a phrase: its tokens side by side in one field, the last one as a prefix. MongoDB's `$text` cannot answer
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
    const phrases = new Map<string, RegExp>();
    for (const word of words) {
      const tokens = tokenize(word);
      tokens.forEach((token, i) => {
        const prefix = i === tokens.length - 1;
        const key = `${prefix ? 'p' : 'w'}:${token}`;
        if (!terms.has(key)) terms.set(key, prefix ? new RegExp(`^${escapeRegExp(token)}`) : token);
      });
      // The words narrow the candidates through the index; the phrase then requires the
      // tokens side by side, in order, in one field, the last as a prefix.
      if (tokens.length > 1) {
        const phrase = tokens.join(' ');
        phrases.set(phrase, new RegExp(`(?:^| )${escapeRegExp(phrase)}`));
      }
    }
    for (const term of terms.values()) and.push({ words: term });
    // Receipts stored before `phrases` existed keep the looser match of their words.
    for (const phrase of phrases.values()) {
      and.push({ $or: [{ phrases: phrase }, { phrases: { $exists: false } }] });
    }
  }
  if (filter.scope !== undefined) and.push({ scope: filter.scope });
  if (filter.agent !== undefined) and.push({ agent: filter.agent });
  if (filter.repository !== undefined) and.push({ repository: filter.repository });
  if (filter.verdict !== undefined) and.push({ verdict: filter.verdict });
  if (filter.status !== undefined) and.push({ admissibility: filter.status });
  // Only deployment receipts carry the field (deploymentEnvironmentOf).
  if (filter.environment !== undefined) and.push({ deployment_environment: filter.environment });
  else if (filter.action_type === 'deployment')
    and.push({ deployment_environment: { $exists: true } });
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

/**
 * The word index (`receipts_fts`) holds, beside the words of each receipt, one token per
 * agent and repository filter value in its `filters` column, so a word search with either
 * filter is one MATCH: FTS5 intersects the two doclists by seeking, instead of reading the
 * receipt of every word match to test the filter (with a filter matching few receipts, or
 * none, that read most of the index). A token is a kind letter and the value's UTF-8 bytes in
 * hex: one token whatever the value holds, and equal tokens only for equal values.
 */
export type FilterKind = 'agent' | 'repository';

export const WORD_COLUMNS = 'claim, entity, repository, agent';

export function filterToken(kind: FilterKind, value: string): string {
  return `${kind === 'agent' ? 'a' : 'r'}${Buffer.from(value, 'utf8').toString('hex')}`;
}

/** The `filters` column of a receipt's row in the word index. */
export function filterColumn(agent: string | null, repository: string | null): string {
  const tokens: string[] = [];
  if (agent !== null) tokens.push(filterToken('agent', agent));
  if (repository !== null) tokens.push(filterToken('repository', repository));
  return tokens.join(' ');
}

/**
 * The MATCH expression of `words` (an ftsQuery) restricted to the word columns, so no word
 * matches a filter token, and of the given filter values.
 */
export function wordMatch(words: string, filters: [FilterKind, string][]): string {
  return [
    `{${WORD_COLUMNS.replaceAll(',', '')}} : (${words})`,
    ...filters.map(([kind, value]) => `filters : "${filterToken(kind, value)}"`),
  ].join(' AND ');
}

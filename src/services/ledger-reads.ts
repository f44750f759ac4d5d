import type { Reviewer } from '../core/disposition.js';
import { SvcError } from '../core/errors.js';
import { pullRequestNumber, type Receipt } from '../core/receipt.js';
import type { Clock } from '../ports/clock.js';
import type {
  AgentSummary,
  LedgerQueries,
  NamePage,
  ReadScope,
  ReceiptFilter,
  RepositorySummary,
} from '../ports/ledger-queries.js';
import type { LedgerEntry, LedgerStore } from '../ports/ledger-store.js';
import { responseOf, type EvaluateResponse } from './claims.js';
import { JsonText } from './json-text.js';

const DAY_MS = 24 * 60 * 60 * 1000;
export const MAX_TIMELINE_DAYS = 366;
export const MAX_COMPARE = 20;
export const MAX_PR_HISTORY = 1000;

const rate = (part: number, total: number) =>
  total === 0 ? 0 : Math.round((part / total) * 10_000) / 10_000;
const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** One page of a listing ordered by a cursor: fetch one more than asked to know if more follow. */
function paged<T, C extends number | string>(rows: T[], limit: number, cursorOf: (row: T) => C) {
  const items = rows.slice(0, limit);
  const more = rows.length > limit;
  return { items, next_after: more ? cursorOf(items[items.length - 1]!) : null };
}

/** A page of summaries, each with its share of ACCEPTED receipts. */
function withRates<T extends { total: number; by_admissibility: { ACCEPTED: number } }>(
  rows: T[],
  limit: number,
  nameOf: (row: T) => string,
) {
  const { items, next_after } = paged(rows, limit, nameOf);
  return {
    items: items.map((row) => ({
      ...row,
      acceptance_rate: rate(row.by_admissibility.ACCEPTED, row.total),
    })),
    limit,
    next_after,
  };
}

export class LedgerReadService {
  constructor(
    private readonly deps: { ledger: LedgerStore; queries: LedgerQueries; clock: Clock },
  ) {}

  /*
   * Every read takes the scope it covers: undefined for the whole ledger (public reads, or a
   * key the operator made a reader of everything), else the caller's own submitter scope, and
   * then nothing outside it is read, counted or named.
   */

  /** The spec's /v1/ledger/stats: totals, the agents and repositories seen, and the head. */
  async ledgerStats(scope?: ReadScope) {
    const stats = await this.deps.ledger.stats(scope);
    const decided = await this.deps.ledger.dispositionCounts(scope);
    const head = await this.deps.ledger.head();
    return {
      total: stats.total,
      accepted: stats.by_admissibility.ACCEPTED,
      blocked: stats.by_verdict.BLOCKED,
      escalated: stats.by_verdict.ESCALATED,
      non_deterministic: stats.by_admissibility.NON_DETERMINISTIC,
      rejected: stats.by_admissibility.REJECTED,
      allowed: stats.by_verdict.ALLOWED,
      by_verdict: stats.by_verdict,
      by_admissibility: stats.by_admissibility,
      agents: stats.agents,
      repositories: stats.repositories,
      // Decisions on the escalations counted above; each disposition is also counted above
      // as the receipt it is, under its own verdict (ALLOWED or BLOCKED).
      dispositions: {
        approved: decided.approve,
        rejected: decided.reject,
        pending: Math.max(0, stats.by_verdict.ESCALATED - decided.approve - decided.reject),
      },
      head: { sequence: head.sequence, receipt_hash: head.receipt_hash },
    };
  }

  async ledgerPage(page: { after?: number; limit: number }, scope?: ReadScope) {
    const rows = await this.deps.queries.search(scope === undefined ? {} : { scope }, {
      after: page.after,
      limit: page.limit + 1,
      order: 'asc',
    });
    const { items, next_after } = paged(rows, page.limit, (r) => r.chain.sequence);
    const head = await this.deps.ledger.head();
    return { receipts: items, limit: page.limit, next_after, head };
  }

  async receipt(receiptId: string, scope?: ReadScope): Promise<EvaluateResponse> {
    return responseOf(await readableEntry(this.deps, receiptId, scope));
  }

  /**
   * A page of `{receipts, limit, order, next_after}`, spliced from the receipts' stored JSON:
   * parsing them only to serialize them again was most of a search's cost. The text is what
   * JSON.stringify gives for the parsed page (the stored JSON is JSON.stringify of each receipt,
   * and the members are written in the same order).
   */
  async search(
    filter: ReceiptFilter,
    page: { after?: number; limit: number; order: 'asc' | 'desc' },
    options: { claims?: boolean } = {},
  ): Promise<JsonText> {
    const rows = await this.deps.queries.searchJson(filter, { ...page, limit: page.limit + 1 });
    const { items, next_after } = paged(rows, page.limit, (r) => r.sequence);
    // The claim texts, by receipt_id, when asked for (a reader's list): reading them means
    // reading each stored entry, which a plain search does not pay for.
    let claims = '';
    if (options.claims && items.length > 0) {
      const entries = await this.deps.queries.getMany(
        items.map((r) => r.receiptId),
        filter.scope,
      );
      const texts = Object.fromEntries(entries.map((e) => [e.receipt.receipt_id, e.claim.claim]));
      claims = `,"claims":${JSON.stringify(texts)}`;
    }
    // The decisions on the page's escalated receipts, by parent: beside the receipts, never in
    // them (a member added to a receipt would be an unsigned one). Only when there are any.
    const decided = await this.dispositionsByParent(items.map((r) => r.receiptId));
    const dispositions =
      decided.size > 0 ? `,"dispositions":${JSON.stringify(Object.fromEntries(decided))}` : '';
    const parts: Buffer[] = [OPEN_RECEIPTS];
    for (const [i, r] of items.entries()) {
      if (i > 0) parts.push(COMMA);
      parts.push(r.json);
    }
    parts.push(
      Buffer.from(
        `],"limit":${JSON.stringify(page.limit)},"order":${JSON.stringify(page.order)},` +
          `"next_after":${JSON.stringify(next_after)}${dispositions}${claims}}`,
      ),
    );
    return new JsonText(Buffer.concat(parts));
  }

  /** Daily counts by verdict for every day in [since, until] (UTC dates, both inclusive). */
  async timeline(options: {
    repository?: string;
    since?: string;
    until?: string;
    scope?: ReadScope;
  }) {
    const until = options.until ?? isoDay(this.deps.clock.now());
    const since = options.since ?? isoDay(Date.parse(until) - 29 * DAY_MS);
    const days = Math.round((Date.parse(until) - Date.parse(since)) / DAY_MS) + 1;
    if (days < 1) throw new SvcError('validation_failed', 'since: must not be after until');
    if (days > MAX_TIMELINE_DAYS) {
      throw new SvcError(
        'validation_failed',
        `until: the range may span at most ${MAX_TIMELINE_DAYS} days`,
      );
    }
    const rows = await this.deps.queries.timeline({
      repository: options.repository,
      since,
      until: isoDay(Date.parse(until) + DAY_MS),
      scope: options.scope,
    });
    const byDay = new Map<
      string,
      { date: string; total: number; ALLOWED: number; BLOCKED: number; ESCALATED: number }
    >();
    for (let i = 0; i < days; i++) {
      const date = isoDay(Date.parse(since) + i * DAY_MS);
      byDay.set(date, { date, total: 0, ALLOWED: 0, BLOCKED: 0, ESCALATED: 0 });
    }
    for (const row of rows) {
      const day = byDay.get(row.day);
      if (!day) continue;
      day[row.verdict] += row.count;
      day.total += row.count;
    }
    return { repository: options.repository ?? null, since, until, days: [...byDay.values()] };
  }

  async compare(receiptIds: string[], scope?: ReadScope) {
    const ids = [...new Set(receiptIds)];
    if (ids.length > MAX_COMPARE) {
      throw new SvcError('validation_failed', `ids: at most ${MAX_COMPARE} receipt ids`);
    }
    // Another scope's receipts are listed among the unknown ids, as ids that do not exist are.
    const entries = await this.deps.queries.getMany(ids, scope);
    const decided = await this.dispositionsByParent(entries.map((e) => e.receipt.receipt_id));
    const found = new Set(entries.map((e) => e.receipt.receipt_id));
    const ruleNames = entries[0]?.evaluation.policy.rules.map((r) => r.rule) ?? [];
    return {
      receipts: entries.map((e) => summarize(e, decided)),
      rules: ruleNames.map((rule) => ({
        rule,
        results: entries.map((e) => {
          const result = e.evaluation.policy.rules.find((r) => r.rule === rule);
          return {
            receipt_id: e.receipt.receipt_id,
            passed: result?.passed ?? null,
            reason: result?.reason ?? null,
          };
        }),
      })),
      same_verdict: new Set(entries.map((e) => e.receipt.policy.verdict)).size <= 1,
      unknown_ids: ids.filter((id) => !found.has(id)),
    };
  }

  /** A pull request's receipts across pushes, and what changed between consecutive ones. */
  async diff(repository: string, pullRequest: string, scope?: ReadScope) {
    // As in the receipt's subject: "007" and 7 are the same request.
    const pr = pullRequestNumber(pullRequest);
    const entries = await this.deps.queries.pullRequestHistory(
      repository,
      String(pr),
      MAX_PR_HISTORY,
      scope,
    );
    const changes = entries.slice(1).map((to, i) => changeBetween(entries[i]!, to));
    const decided = await this.dispositionsByParent(entries.map((e) => e.receipt.receipt_id));
    return {
      repository,
      pull_request: pr,
      receipts: entries.map((e) => summarize(e, decided)),
      changes,
    };
  }

  /** The decisions on those of the given receipts that have one, by parent receipt id. */
  private async dispositionsByParent(
    receiptIds: string[],
  ): Promise<Map<string, DispositionSummary>> {
    const entries = receiptIds.length > 0 ? await this.deps.ledger.dispositionsOf(receiptIds) : [];
    return new Map(
      entries.flatMap((e) =>
        e.receipt.disposition
          ? [[e.receipt.disposition.parent_receipt_id, dispositionSummary(e)]]
          : [],
      ),
    );
  }

  async repositories(page: NamePage, scope?: ReadScope) {
    const rows = await this.deps.queries.repositories({ ...page, limit: page.limit + 1 }, scope);
    const { items, limit, next_after } = withRates(
      rows,
      page.limit,
      (r: RepositorySummary) => r.repository,
    );
    return { repositories: items, limit, next_after };
  }

  async agents(page: NamePage, scope?: ReadScope) {
    const rows = await this.deps.queries.agents({ ...page, limit: page.limit + 1 }, scope);
    const { items, limit, next_after } = withRates(rows, page.limit, (a: AgentSummary) => a.agent);
    return { agents: items, limit, next_after };
  }

  async overview(scope?: ReadScope) {
    const now = this.deps.clock.now();
    const totals = await this.deps.queries.totals(scope);
    const recent = await this.deps.queries.countSince(new Date(now - DAY_MS).toISOString(), scope);
    const head = await this.deps.ledger.head();
    return {
      receipts: totals.total,
      agents: totals.agents,
      repositories: totals.repositories,
      acceptance_rate: rate(totals.by_admissibility.ACCEPTED, totals.total),
      by_verdict: totals.by_verdict,
      by_admissibility: totals.by_admissibility,
      last_24h: {
        receipts: recent.total,
        by_verdict: {
          ALLOWED: recent.ALLOWED,
          BLOCKED: recent.BLOCKED,
          ESCALATED: recent.ESCALATED,
        },
      },
      head,
      generated_at: new Date(now).toISOString(),
    };
  }
}

const OPEN_RECEIPTS = Buffer.from('{"receipts":[');
const COMMA = Buffer.from(',');

/** A decision on an escalated receipt, as the reads show it beside its parent. */
export interface DispositionSummary {
  receipt_id: string;
  sequence: number;
  issued_at: string;
  decision: 'approve' | 'reject';
  reviewer: Reviewer;
  reason: string;
}

function dispositionSummary(entry: LedgerEntry): DispositionSummary {
  const r = entry.receipt;
  const d = r.disposition!;
  return {
    receipt_id: r.receipt_id,
    sequence: r.chain.sequence,
    issued_at: r.issued_at,
    decision: d.decision,
    reviewer: d.reviewer,
    reason: d.reason,
  };
}

function summarize(entry: LedgerEntry, decided: Map<string, DispositionSummary>) {
  const r: Receipt = entry.receipt;
  const disposition = decided.get(r.receipt_id);
  return {
    receipt_id: r.receipt_id,
    sequence: r.chain.sequence,
    issued_at: r.issued_at,
    claim_id: r.claim_id,
    subject: r.subject,
    verdict: r.policy.verdict,
    admissibility: r.admissibility.status,
    failed_rules: r.policy.checks.map((c) => c.rule),
    evidence: {
      inputs_hash: r.evidence.inputs_hash,
      source_count: r.evidence.source_count,
      source_types: r.evidence.source_types,
      sources: entry.claim.sources.map((s) => ({
        id: s.id,
        type: s.type,
        confidence: s.confidence,
      })),
    },
    // Present only where they apply: the decision on an escalated receipt, and a decision's parent.
    ...(disposition ? { disposition } : {}),
    ...(r.disposition ? { parent_receipt_id: r.disposition.parent_receipt_id } : {}),
  };
}

function changeBetween(from: LedgerEntry, to: LedgerEntry) {
  const changed = <T>(a: T, b: T) => (a === b ? null : { from: a, to: b });
  const before = new Map(from.evaluation.policy.rules.map((r) => [r.rule, r.passed]));
  const fromSources = new Set(from.claim.sources.map((s) => s.id));
  const toSources = new Set(to.claim.sources.map((s) => s.id));
  return {
    from: from.receipt.receipt_id,
    to: to.receipt.receipt_id,
    commit: changed(from.receipt.subject.commit ?? null, to.receipt.subject.commit ?? null),
    verdict: changed(from.receipt.policy.verdict, to.receipt.policy.verdict),
    admissibility: changed(from.receipt.admissibility.status, to.receipt.admissibility.status),
    rules_flipped: to.evaluation.policy.rules
      .filter((r) => before.has(r.rule) && before.get(r.rule) !== r.passed)
      .map((r) => ({ rule: r.rule, from: before.get(r.rule)!, to: r.passed })),
    sources_added: [...toSources].filter((id) => !fromSources.has(id)),
    sources_removed: [...fromSources].filter((id) => !toSources.has(id)),
  };
}

/**
 * The stored entry of a receipt the reader may see; 404 otherwise. Another scope's receipt
 * answers exactly as one that does not exist: no existence oracle.
 */
export async function readableEntry(
  deps: { ledger: LedgerStore; queries: Pick<LedgerQueries, 'getMany'> },
  receiptId: string,
  scope: ReadScope,
): Promise<LedgerEntry> {
  const entry =
    scope === undefined
      ? await deps.ledger.getByReceiptId(receiptId)
      : ((await deps.queries.getMany([receiptId], scope))[0] ?? null);
  if (!entry)
    throw new SvcError('not_found', `No receipt ${JSON.stringify(receiptId)} in this ledger`);
  return entry;
}

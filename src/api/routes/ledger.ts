import type { Response } from 'express';
import type { LedgerReadService } from '../../services/ledger-reads.js';
import { readScopeOf } from '../read-scope.js';
import { defineRoute, type RouteDef } from '../route-table.js';
import { namePageQuery } from '../schemas/common.js';
import { evaluateResponseSchema } from '../schemas/claims.js';
import {
  agentsSchema,
  compareQuery,
  compareSchema,
  diffQuery,
  diffSchema,
  ledgerPageSchema,
  ledgerQuery,
  ledgerStatsSchema,
  overviewSchema,
  receiptParams,
  reposSchema,
  searchPageSchema,
  searchQuery,
  timelineQuery,
  timelineSchema,
} from '../schemas/ledger.js';

const tag = 'Ledger';

export function ledgerRoutes(
  reads: LedgerReadService,
  options: { publicReads: boolean },
): RouteDef[] {
  const scopeOf = (res: Response) => readScopeOf(res, options.publicReads);
  return [
    defineRoute({
      method: 'get',
      path: '/v1/ledger/stats',
      operationId: 'getLedgerStats',
      tag,
      summary: 'Totals by verdict and admissibility; agents and repositories seen',
      description:
        'Totals by verdict and by admissibility, the agents and repositories seen, and the ledger head (sequence and receipt hash), which a relying party can record. Read from aggregates kept with each receipt. A read: while reads are private, the caller’s own receipts only (the head is the ledger’s).',
      access: 'read',
      response: { status: 200, description: 'Ledger statistics.', schema: ledgerStatsSchema },
      handle: ({ res }) => reads.ledgerStats(scopeOf(res)),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/ledger',
      operationId: 'listLedger',
      tag,
      summary: 'The ledger in sequence order, paginated',
      description:
        'Receipts in sequence order with the ledger head; `after` is a sequence number and every page answers next_after (null on the last page).',
      access: 'read',
      query: ledgerQuery,
      response: { status: 200, description: 'One page of receipts.', schema: ledgerPageSchema },
      handle: ({ query, res }) => reads.ledgerPage(query, scopeOf(res)),
    }),
    // Before /v1/receipts/:id, which would otherwise take "search" for an id.
    defineRoute({
      method: 'get',
      path: '/v1/receipts/search',
      operationId: 'searchReceipts',
      tag,
      summary: 'Search receipts by words, agent, repository, verdict, admissibility and time',
      description:
        'Filters ANDed: q (whole words by prefix in the claim text, entity, repository and agent), agent, repo, verdict, status (admissibility), action_type=deployment, environment (with repo), since (inclusive) and until (exclusive). Newest first unless order=asc; after continues in the chosen order.',
      access: 'read',
      query: searchQuery,
      response: {
        status: 200,
        description: 'One page of matching receipts.',
        schema: searchPageSchema,
      },
      handle: ({ query, res }) =>
        reads.search(
          {
            scope: scopeOf(res),
            q: query.q,
            agent: query.agent,
            repository: query.repo,
            verdict: query.verdict,
            status: query.status,
            action_type: query.action_type,
            environment: query.environment,
            since: query.since,
            until: query.until,
          },
          { after: query.after, limit: query.limit, order: query.order },
          { claims: query.include === 'claims' },
        ),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/receipts/timeline',
      operationId: 'getTimeline',
      tag,
      summary: 'Daily receipt counts by verdict',
      description:
        'One row per UTC day from since to until (both inclusive; by default the last 30 days, at most 366), days without receipts included, with counts by verdict; optionally for one repository.',
      access: 'read',
      query: timelineQuery,
      response: {
        status: 200,
        description: 'One row per day of the range.',
        schema: timelineSchema,
      },
      handle: ({ query, res }) => reads.timeline({ ...query, scope: scopeOf(res) }),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/receipts/compare',
      operationId: 'compareReceipts',
      tag,
      summary: 'Side-by-side comparison of up to 20 receipts',
      description:
        'Up to 20 distinct receipt ids, answered in ledger order: a summary of each (verdict, admissibility, failed rules, evidence), a rule by receipt matrix, whether the verdicts agree, and the ids not found.',
      access: 'read',
      query: compareQuery,
      response: {
        status: 200,
        description: 'Verdicts, rules and evidence side by side; unknown ids listed.',
        schema: compareSchema,
      },
      handle: ({ query, res }) => reads.compare(query.ids, scopeOf(res)),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/receipts/diff',
      operationId: 'diffPullRequest',
      tag,
      summary: 'A pull request’s receipts across pushes, and what changed between them',
      description:
        'The receipts of one pull request in ledger order (one per evaluated push) and, between consecutive ones, what changed: commit, verdict, admissibility, rules that flipped, sources added and removed. At most the first 1,000 receipts; an unknown pull request answers empty lists.',
      access: 'read',
      query: diffQuery,
      response: {
        status: 200,
        description: 'Receipts in order and the changes between consecutive ones.',
        schema: diffSchema,
      },
      handle: ({ query, res }) => reads.diff(query.repository, query.pr, scopeOf(res)),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/receipts/:id',
      operationId: 'getReceipt',
      tag,
      summary: 'One receipt with its claim and evaluation',
      description: 'The response evaluate gave when the receipt was issued.',
      access: 'read',
      params: receiptParams,
      response: {
        status: 200,
        description: 'The stored evaluation.',
        schema: evaluateResponseSchema,
      },
      errors: [404],
      handle: ({ params, res }) => reads.receipt(params.id, scopeOf(res)),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/repos',
      operationId: 'listRepositories',
      tag: 'Analytics',
      summary: 'Per repository: totals by verdict, acceptance rate, last receipt',
      description:
        'Per repository, in name order with a name cursor: totals by verdict and admissibility, acceptance rate (share of ACCEPTED, 0 to 1) and the last receipt.',
      access: 'read',
      query: namePageQuery,
      response: { status: 200, description: 'Repositories in name order.', schema: reposSchema },
      handle: ({ query, res }) => reads.repositories(query, scopeOf(res)),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/agents',
      operationId: 'listAgents',
      tag: 'Analytics',
      summary: 'Per agent: verdicts, admissibility and models seen',
      description:
        'Per agent, in name order with a name cursor: totals by verdict and admissibility, acceptance rate, the models seen, and when it was first and last seen.',
      access: 'read',
      query: namePageQuery,
      response: { status: 200, description: 'Agents in name order.', schema: agentsSchema },
      handle: ({ query, res }) => reads.agents(query, scopeOf(res)),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/overview',
      operationId: 'getOverview',
      tag: 'Analytics',
      summary: 'Receipts, agents, repositories, acceptance rate and the last 24 hours',
      description:
        'Receipts, agents, repositories and acceptance rate, totals by verdict and admissibility, the last 24 hours by verdict, and the ledger head.',
      access: 'read',
      response: { status: 200, description: 'System-wide overview.', schema: overviewSchema },
      handle: ({ res }) => reads.overview(scopeOf(res)),
    }),
  ];
}

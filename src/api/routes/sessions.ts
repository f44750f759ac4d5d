import type { SessionService } from '../../services/sessions.js';
import { readScopeOf } from '../read-scope.js';
import { defineRoute, type RouteDef } from '../route-table.js';
import {
  sessionDetailSchema,
  sessionListQuery,
  sessionPageSchema,
  sessionParams,
  sessionRecordsQuery,
} from '../schemas/sessions.js';

/** Agent sessions (contract §12): reads of the ledger, private when reads are. */
export function sessionRoutes(
  sessions: SessionService,
  options: { publicReads: boolean },
): RouteDef[] {
  return [
    defineRoute({
      method: 'get',
      path: '/v1/sessions',
      operationId: 'listSessions',
      tag: 'Ledger',
      summary: 'Agent sessions: their tool-call decisions, outcomes and coverage',
      description:
        'Sessions of agent harnesses, newest first (by the sequence of their first receipt), with counts of decisions by verdict, dispositions, outcomes and ran_without_allow, and whether each is covered (contract §12). Filters: agent, repo, harness, covered. With private reads, the key’s own account’s sessions.',
      access: 'read',
      query: sessionListQuery,
      response: { status: 200, description: 'A page of sessions.', schema: sessionPageSchema },
      handle: ({ query, res }) => sessions.list(query, readScopeOf(res, options.publicReads)),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/sessions/:id',
      operationId: 'getSession',
      tag: 'Ledger',
      summary: 'One agent session: its receipts in ledger order, counts and coverage',
      description:
        'The session’s decisions, dispositions and outcomes in ledger order (a page of `limit` after `after`), each with the call’s tool facts and its receipt, and the session’s counts and coverage. A session belongs to the account that submitted its decisions; when two accounts used the same session id, the one started first is answered (with private reads, the key’s own). 404 for a session unknown or unreadable to this caller.',
      access: 'read',
      params: sessionParams,
      query: sessionRecordsQuery,
      response: {
        status: 200,
        description: 'The session and a page of its receipts.',
        schema: sessionDetailSchema,
      },
      errors: [404],
      handle: ({ params, query, res }) =>
        sessions.session(
          params.id,
          { limit: query.limit, ...(query.after === undefined ? {} : { after: query.after }) },
          readScopeOf(res, options.publicReads),
        ),
    }),
  ];
}

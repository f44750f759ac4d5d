import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { withApprovalSource } from '../../src/core/approval.js';
import { sessionCoverage } from '../../src/core/session-coverage.js';
import type { AppendResult, LedgerEntry } from '../../src/ports/ledger-store.js';
import type { Store } from '../../src/ports/store.js';
import { OutcomeService } from '../../src/services/outcomes.js';
import { ManualClock, newServerKey } from '../support/harness.js';
import { inputDigestOf, toolCallClaim, type ToolCallSpec } from '../support/tool-calls.js';
import { appendRequest, dispositionRequest, signClaim } from './ledger-fixtures.js';

const A = 'key:agent-a';
const B = 'key:agent-b';
const REVIEWER = 'key:reviewer';
const HOUR = 60 * 60 * 1000;

function appended(result: AppendResult): LedgerEntry {
  expect(result.status).toBe('appended');
  return result.entry;
}

/** Errors of a native driver may be of another realm: compare by message only. */
const expectRejected = (promise: Promise<unknown>, message: string) =>
  expect(promise).rejects.toHaveProperty('message', expect.stringContaining(message));

/**
 * Agent sessions (contract §12) as every store keeps them: records written by the ledger's
 * appends, the counts of sessionCoverage, the lookups of outcomes and approvals, and an
 * approval used once. `open` gives a fresh store with the default approval lifetime (1 h).
 */
export function describeSessionContract(name: string, open: () => Promise<Store>): void {
  describe(`${name} sessions contract`, () => {
    const serverKey = newServerKey();
    let store: Store;
    let clock: ManualClock;

    beforeEach(async () => {
      store = await open();
      clock = new ManualClock(Date.now());
    });
    afterEach(async () => {
      await store.close();
    });

    const decide = async (
      spec: ToolCallSpec & { scope?: string; issuedAt?: string },
      cite?: { receiptId: string; receiptHash: string },
    ) => {
      const base = toolCallClaim(spec);
      const claim = cite ? withApprovalSource(base, cite) : base;
      const signed = signClaim(claim, serverKey, {
        scope: spec.scope ?? A,
        ...(spec.issuedAt ? { issuedAt: spec.issuedAt } : {}),
      });
      return store.ledger.append(appendRequest(signed));
    };
    const decided = async (spec: ToolCallSpec & { scope?: string; issuedAt?: string }) =>
      appended(await decide(spec));
    const dispose = async (parent: LedgerEntry, decision: 'approve' | 'reject' = 'approve') =>
      appended(
        await store.ledger.append(
          dispositionRequest(parent, serverKey, { scope: REVIEWER, decision }),
        ),
      );
    const outcomes = () =>
      new OutcomeService({
        ledger: store.ledger,
        sessions: store.sessions,
        serverKey,
        clock,
        logOrigin: 'svc/test',
      });
    const report = (
      scope: string,
      sessionId: string,
      call: { tool?: string; input?: unknown; toolUseId?: string; gitHead?: string },
      status: 'succeeded' | 'failed' = 'succeeded',
    ) =>
      outcomes().recordOutcome(
        {
          session_id: sessionId,
          tool_name: call.tool ?? 'Bash',
          ...(call.toolUseId === undefined
            ? { input_digest: inputDigestOf(call.input ?? { command: 'npm test' }) }
            : { tool_use_id: call.toolUseId }),
          status,
          exit_code: status === 'succeeded' ? 0 : 1,
          ...(call.gitHead === undefined ? {} : { git_head: call.gitHead }),
        },
        {
          submitter: { kind: 'api_key', key_id: `kid_${'3'.repeat(26)}` },
          scope,
          account: scope.slice('key:'.length),
          lockedPolicy: null,
        },
      );

    it('a session holds its decisions, dispositions and outcomes in order, with the counts of sessionCoverage', async () => {
      const sessionId = 'sess-order';
      const allowed = await decided({ sessionId, input: { command: 'ls' } });
      const blocked = await decided({ sessionId, input: { command: 'rm -rf /' }, kind: 'blocked' });
      const escalated = await decided({
        sessionId,
        input: { command: 'npm publish' },
        kind: 'escalated',
      });
      const approval = await dispose(escalated);
      const ran = await report(A, sessionId, { input: { command: 'ls' } });
      const bypass = await report(A, sessionId, { input: { command: 'rm -rf /' } }, 'failed');
      const approvedRun = await report(A, sessionId, { input: { command: 'npm publish' } });
      // A receipt of no session, between them.
      await store.ledger.append(appendRequest(signClaim(toolCallClaim(), serverKey, { scope: B })));

      expect(ran.response.receipt.outcome?.parent_receipt_id).toBe(allowed.receipt.receipt_id);
      expect(ran.response.receipt.policy.verdict).toBe('ALLOWED');
      expect(bypass.response.receipt.policy.verdict).toBe('BLOCKED');
      expect(approvedRun.response.receipt.policy.verdict).toBe('ALLOWED');

      const rows = await store.sessions.records(A, sessionId, { limit: 100 });
      expect(rows.map((r) => [r.record.kind, r.record.receipt_id])).toEqual([
        ['decision', allowed.receipt.receipt_id],
        ['decision', blocked.receipt.receipt_id],
        ['decision', escalated.receipt.receipt_id],
        ['disposition', approval.receipt.receipt_id],
        ['outcome', ran.response.receipt.receipt_id],
        ['outcome', bypass.response.receipt.receipt_id],
        ['outcome', approvedRun.response.receipt.receipt_id],
      ]);
      // The entries are the ledger's, byte for byte.
      for (const { entry } of rows)
        expect(entry).toEqual(await store.ledger.getByReceiptId(entry.receipt.receipt_id));
      expect(rows.map((r) => r.record.ran_without_allow)).toEqual([
        false,
        false,
        false,
        false,
        false,
        true,
        false,
      ]);

      const coverage = sessionCoverage(
        rows.map((r) => r.record),
        'claude-code',
      );
      const summary = await store.sessions.get(sessionId, undefined);
      expect(summary).toMatchObject({
        scope: A,
        session_id: sessionId,
        harness: 'claude-code',
        agent: 'coder-bot',
        first_sequence: allowed.receipt.chain.sequence,
        last_sequence: approvedRun.response.receipt.chain.sequence,
        decisions: coverage.decisions,
        dispositions: coverage.dispositions,
        outcomes: coverage.outcomes,
        ran_without_allow: coverage.ran_without_allow,
        missing_outcomes: coverage.missing_outcomes.length,
        covered: coverage.covered,
      });
      expect(summary?.covered).toBe(false);
      expect(summary?.decisions).toEqual({ ALLOWED: 1, BLOCKED: 1, ESCALATED: 1 });

      // Pages continue after a sequence.
      const page = await store.sessions.records(A, sessionId, {
        after: rows[2]!.record.sequence,
        limit: 2,
      });
      expect(page.map((r) => r.record.kind)).toEqual(['disposition', 'outcome']);
    });

    it('an allowed call without its outcome leaves a session that reports outcomes uncovered', async () => {
      const sessionId = 'sess-missing';
      await decided({ sessionId, input: { command: 'a' } });
      expect((await store.sessions.get(sessionId, A))?.covered).toBe(true);
      await report(A, sessionId, { input: { command: 'a' } });
      await decided({ sessionId, input: { command: 'b' } });
      const summary = await store.sessions.get(sessionId, A);
      expect(summary).toMatchObject({ missing_outcomes: 1, covered: false });
      await report(A, sessionId, { input: { command: 'b' } });
      expect(await store.sessions.get(sessionId, A)).toMatchObject({
        missing_outcomes: 0,
        covered: true,
      });
    });

    it("keeps a session's latest start and end events; a start after the end opens it again", async () => {
      const sessionId = 'sess-lifecycle';
      await decided({ sessionId });
      const lifecycle = async () => {
        const got = await store.sessions.get(sessionId, A);
        const listed = (await store.sessions.list({ scope: A }, { limit: 100 })).find(
          (s) => s.session_id === sessionId,
        );
        expect(listed).toEqual(got);
        return {
          started_at: got!.started_at,
          ended_at: got!.ended_at,
          end_reason: got!.end_reason,
        };
      };
      expect(await lifecycle()).toEqual({ started_at: null, ended_at: null, end_reason: null });
      const event = (kind: 'start' | 'end', at: string, reason: string | null, scope = A) =>
        store.sessions.recordEvent({
          scope,
          session_id: sessionId,
          harness: 'claude-code',
          kind,
          at,
          reason,
        });
      await event('start', '2026-11-28T10:00:00.000Z', 'startup');
      expect(await lifecycle()).toEqual({
        started_at: '2026-11-28T10:00:00.000Z',
        ended_at: null,
        end_reason: null,
      });
      await event('end', '2026-11-28T10:30:00.000Z', 'exit');
      await event('end', '2026-11-28T12:00:00.000Z', 'other', B); // another scope's session
      expect(await lifecycle()).toEqual({
        started_at: '2026-11-28T10:00:00.000Z',
        ended_at: '2026-11-28T10:30:00.000Z',
        end_reason: 'exit',
      });
      await event('start', '2026-11-28T11:00:00.000Z', 'resume');
      expect(await lifecycle()).toEqual({
        started_at: '2026-11-28T11:00:00.000Z',
        ended_at: null,
        end_reason: null,
      });
      await event('end', '2026-11-28T11:05:00.000Z', null);
      expect(await lifecycle()).toMatchObject({
        ended_at: '2026-11-28T11:05:00.000Z',
        end_reason: null,
      });
      // Events are no receipts: the session's records and counts are as they were.
      expect(await store.sessions.get(sessionId, A)).toMatchObject({ covered: true, outcomes: 0 });
    });

    it("gives the working directory of a session's latest start as its project directory", async () => {
      const sessionId = 'sess-project-dir';
      const event = (
        kind: 'start' | 'end',
        at: string,
        cwd: string | null | undefined,
        scope = A,
      ) =>
        store.sessions.recordEvent({
          scope,
          session_id: sessionId,
          harness: 'codex',
          kind,
          at,
          reason: null,
          ...(cwd !== undefined && { cwd }),
        });
      expect(await store.sessions.projectDirOf(A, sessionId)).toBeNull();
      await event('start', '2026-11-29T10:00:00.000Z', undefined);
      expect(await store.sessions.projectDirOf(A, sessionId)).toBeNull();
      await event('start', '2026-11-29T10:01:00.000Z', '/home/dev/web');
      await event('end', '2026-11-29T10:02:00.000Z', '/tmp'); // an end names no project
      await event('start', '2026-11-29T10:03:00.000Z', '/home/dev/other', B); // another scope
      expect(await store.sessions.projectDirOf(A, sessionId)).toBe('/home/dev/web');
      expect(await store.sessions.projectDirOf(B, sessionId)).toBe('/home/dev/other');
      await event('start', '2026-11-29T10:04:00.000Z', '/home/dev/web2'); // resumed elsewhere
      expect(await store.sessions.projectDirOf(A, sessionId)).toBe('/home/dev/web2');
    });

    it('an MCP tool named without its server finds its decision on any server, and only that tool', async () => {
      const sessionId = 'sess-any-server';
      const input = { q: 1 };
      const on = (tool: string) => decided({ sessionId, tool, input });
      const mine = await on('mcp__db.example:3000__query_%_v1');
      await on('mcp__db.example:3000__queryX%_v1'); // the same but one character
      await on('mcp__db.example:3000__run_query_%_v1'); // a longer name with the same tail
      await on('mcp__query_%_v1'); // no server at all
      await on('mcp__a__x__query_%_v1'); // the tool x__query_%_v1 of the server a
      const key = { scope: A, sessionId, toolName: 'mcp__unknown__query_%_v1' };
      const found = (mcpToolOfAnyServer: string, inputDigest = inputDigestOf(input)) =>
        store.sessions.latestDecision({ ...key, mcpToolOfAnyServer, inputDigest });
      expect((await found('query_%_v1'))?.receipt.receipt_id).toBe(mine.receipt.receipt_id);
      expect(await found('query_%_v1', inputDigestOf({ q: 2 }))).toBeNull();
      expect(await found('y_%_v1')).toBeNull();
      expect(await found('query.*')).toBeNull();
      // A tool whose own name holds `__` is read as mcpToolOf reads it: server a, tool x__….
      const nested = await store.sessions.latestDecision({
        ...key,
        mcpToolOfAnyServer: 'x__query_%_v1',
        inputDigest: inputDigestOf(input),
      });
      expect(nested?.claim.action?.tool?.name).toBe('mcp__a__x__query_%_v1');
      expect(
        await store.sessions.latestDecision({ ...key, inputDigest: inputDigestOf(input) }),
      ).toBeNull();
    });

    it('an outcome finds the newest decision on the call, by digest or tool-use id, in its own scope', async () => {
      const sessionId = 'sess-latest';
      await decided({ sessionId, input: { n: 1 }, toolUseId: 'toolu_1' });
      const newer = await decided({ sessionId, input: { n: 1 }, toolUseId: 'toolu_2' });
      const key = { scope: A, sessionId, toolName: 'Bash' };
      expect(
        (await store.sessions.latestDecision({ ...key, inputDigest: inputDigestOf({ n: 1 }) }))
          ?.receipt.receipt_id,
      ).toBe(newer.receipt.receipt_id);
      expect(
        (await store.sessions.latestDecision({ ...key, toolUseId: 'toolu_2' }))?.receipt.receipt_id,
      ).toBe(newer.receipt.receipt_id);
      expect(
        await store.sessions.latestDecision({
          ...key,
          scope: B,
          inputDigest: inputDigestOf({ n: 1 }),
        }),
      ).toBeNull();
      expect(
        await store.sessions.latestDecision({
          ...key,
          toolName: 'Write',
          inputDigest: inputDigestOf({ n: 1 }),
        }),
      ).toBeNull();

      // Another scope reporting the same call has no decision: ran_without_allow, unlinked.
      const stray = await report(B, sessionId, { input: { n: 1 } });
      expect(stray.response.receipt.outcome).toMatchObject({ parent_receipt_id: null });
      expect(stray.response.receipt.policy.verdict).toBe('BLOCKED');
      expect(await store.sessions.get(sessionId, B)).toMatchObject({
        ran_without_allow: 1,
        covered: false,
      });
      // The same report again is the stored outcome; another report of the decision conflicts.
      const first = await report(A, sessionId, { input: { n: 1 } });
      const again = await report(A, sessionId, { input: { n: 1 } });
      expect(again.replayed).toBe(true);
      expect(again.response.receipt.receipt_id).toBe(first.response.receipt.receipt_id);
      await expectRejected(report(A, sessionId, { input: { n: 1 } }, 'failed'), 'another outcome');
    });

    it('lists sessions newest first, by agent, repository, harness, scope and coverage', async () => {
      await decided({ sessionId: 's1', agent: 'bot-a', repository: 'acme/one', harness: 'codex' });
      await decided({ sessionId: 's2', agent: 'bot-b', repository: 'acme/two', scope: B });
      await decided({ sessionId: 's3', agent: 'bot-a', repository: 'acme/two' });
      await report(A, 's3', { input: { command: 'unknown' } });
      const ids = (list: { session_id: string }[]) => list.map((s) => s.session_id);
      const page = { limit: 10 };
      expect(ids(await store.sessions.list({}, page))).toEqual(['s3', 's2', 's1']);
      expect(ids(await store.sessions.list({ agent: 'bot-a' }, page))).toEqual(['s3', 's1']);
      expect(ids(await store.sessions.list({ repository: 'acme/two' }, page))).toEqual([
        's3',
        's2',
      ]);
      expect(ids(await store.sessions.list({ harness: 'codex' }, page))).toEqual(['s1']);
      expect(ids(await store.sessions.list({ scope: B }, page))).toEqual(['s2']);
      expect(ids(await store.sessions.list({ covered: false }, page))).toEqual(['s3']);
      expect(ids(await store.sessions.list({ covered: true }, page))).toEqual(['s2', 's1']);
      const first = await store.sessions.list({}, { limit: 2 });
      expect(ids(first)).toEqual(['s3', 's2']);
      expect(
        ids(await store.sessions.list({}, { limit: 2, before: first[1]!.first_sequence })),
      ).toEqual(['s1']);
    });

    it('finds the sessions whose outcomes reported a commit as HEAD, once each, in report order', async () => {
      const [c1, c2, c3, none] = ['1', '2', '3', '4'].map((d) => d.repeat(40)) as [
        string,
        string,
        string,
        string,
      ];
      await decided({ sessionId: 'git-a', input: { command: 'git commit -m one' } });
      const first = await report(A, 'git-a', {
        input: { command: 'git commit -m one' },
        gitHead: c1,
      });
      // The outcome's claim signs the HEAD it reported.
      expect(first.response.receipt.policy.verdict).toBe('ALLOWED');
      const stored = await store.ledger.getByReceiptId(first.response.receipt.receipt_id);
      expect(stored?.claim.action?.git_head).toBe(c1);
      await decided({ sessionId: 'git-a', input: { command: 'ls' } });
      await report(A, 'git-a', { input: { command: 'ls' }, gitHead: c1 });
      await decided({ sessionId: 'git-a', input: { command: 'git commit -m two' } });
      await report(A, 'git-a', { input: { command: 'git commit -m two' }, gitHead: c2 });
      // Another scope's session reporting c1 without a decision: found too (ran_without_allow).
      await report(B, 'git-b', { input: { command: 'git commit' }, gitHead: c1 });
      // A decision never carries a HEAD, and an outcome without one reports nothing.
      await decided({ sessionId: 'git-c', input: { command: 'true' } });
      await report(A, 'git-c', { input: { command: 'true' } });

      expect(await store.sessions.commitReports([c1, c2, c3, none], 10)).toEqual([
        { commit: c1, scope: A, session_id: 'git-a' },
        { commit: c2, scope: A, session_id: 'git-a' },
        { commit: c1, scope: B, session_id: 'git-b' },
      ]);
      expect(await store.sessions.commitReports([c2], 10)).toEqual([
        { commit: c2, scope: A, session_id: 'git-a' },
      ]);
      expect(await store.sessions.commitReports([c1, c2], 1)).toHaveLength(1);
      expect(await store.sessions.commitReports([c3], 10)).toEqual([]);
      expect(await store.sessions.commitReports([], 10)).toEqual([]);
    });

    it('two scopes with one session id have two sessions; the first started is answered to all', async () => {
      await decided({ sessionId: 'shared', scope: A });
      await decided({ sessionId: 'shared', scope: B, kind: 'blocked' });
      expect(await store.sessions.get('shared', undefined)).toMatchObject({ scope: A });
      expect(await store.sessions.get('shared', B)).toMatchObject({
        scope: B,
        decisions: { ALLOWED: 0, BLOCKED: 1, ESCALATED: 0 },
      });
      expect(await store.sessions.get('shared', 'key:nobody')).toBeNull();
      expect(await store.sessions.records(B, 'shared', { limit: 10 })).toHaveLength(1);
    });

    describe('argument-bound approval', () => {
      const sessionId = 'sess-approval';
      const input = { command: 'terraform apply' };
      const setUp = async () => {
        const escalated = await decided({ sessionId, input, kind: 'escalated' });
        const approval = await dispose(escalated);
        return {
          escalated,
          approval,
          cite: {
            receiptId: approval.receipt.receipt_id,
            receiptHash: approval.receipt.chain.receipt_hash,
          },
        };
      };
      const snapshot = async () => ({
        head: await store.ledger.head(),
        session: await store.sessions.get(sessionId, A),
      });

      it('lets the same call in the same session run once', async () => {
        const { cite, approval } = await setUp();
        const key = { scope: A, sessionId, toolName: 'Bash', inputDigest: inputDigestOf(input) };
        const since = new Date(Date.now() - HOUR).toISOString();
        expect(await store.sessions.openApproval(key, since)).toEqual({
          ...cite,
          issuedAt: approval.receipt.issued_at,
        });
        const allowed = appended(await decide({ sessionId, input, kind: 'escalated' }, cite));
        expect(allowed.receipt.policy.verdict).toBe('ALLOWED');
        expect(allowed.evaluation.policy.rules.at(-1)).toMatchObject({
          rule: 'rule:approved',
          passed: true,
        });
        expect(await store.sessions.openApproval(key, since)).toBeNull();

        const before = await snapshot();
        await expectRejected(decide({ sessionId, input, kind: 'escalated' }, cite), 'used already');
        expect(await snapshot()).toEqual(before);
      });

      it('finds no approval for a call that has only a rejection, nor one issued before `since`, and the newest of two', async () => {
        const key = { scope: A, sessionId, toolName: 'Bash', inputDigest: inputDigestOf(input) };
        const since = new Date(Date.now() - HOUR).toISOString();
        const rejected = await decided({ sessionId, input, kind: 'escalated' });
        const rejection = await dispose(rejected, 'reject');
        expect(await store.sessions.openApproval(key, since)).toBeNull();

        const first = await dispose(await decided({ sessionId, input, kind: 'escalated' }));
        const second = await dispose(await decided({ sessionId, input, kind: 'escalated' }));
        expect(first.receipt.chain.sequence).toBeGreaterThan(rejection.receipt.chain.sequence);
        expect(await store.sessions.openApproval(key, since)).toEqual({
          receiptId: second.receipt.receipt_id,
          receiptHash: second.receipt.chain.receipt_hash,
          issuedAt: second.receipt.issued_at,
        });
        const after = new Date(Date.parse(second.receipt.issued_at) + 1).toISOString();
        expect(await store.sessions.openApproval(key, after)).toBeNull();
      });

      it.each([
        ['another session', { sessionId: 'sess-other' }, 'another session'],
        ['a changed input', { input: { command: 'terraform apply ' } }, 'another input'],
        ['another tool', { tool: 'Write' }, 'another tool'],
        ['another scope', { scope: B }, 'another session'],
      ])('refuses it for %s, and writes nothing', async (_name, change, message) => {
        const { cite } = await setUp();
        const before = await snapshot();
        await expectRejected(
          decide({ sessionId, input, kind: 'escalated', ...change }, cite),
          message,
        );
        expect(await snapshot()).toEqual(before);
      });

      it('refuses an expired approval, a rejection, a wrong hash and a receipt that is no disposition', async () => {
        const { cite, escalated } = await setUp();
        const late = new Date(Date.now() + 2 * HOUR).toISOString();
        await expectRejected(
          decide({ sessionId, input, kind: 'escalated', issuedAt: late }, cite),
          'expired',
        );
        await expectRejected(
          decide(
            { sessionId, input, kind: 'escalated' },
            { ...cite, receiptHash: `sha256:${'0'.repeat(64)}` },
          ),
          'not the one cited',
        );
        await expectRejected(
          decide(
            { sessionId, input, kind: 'escalated' },
            {
              receiptId: escalated.receipt.receipt_id,
              receiptHash: escalated.receipt.chain.receipt_hash,
            },
          ),
          'no disposition',
        );
        const other = await decided({ sessionId: 'sess-rejected', input, kind: 'escalated' });
        const rejection = await dispose(other, 'reject');
        await expectRejected(
          decide(
            { sessionId: 'sess-rejected', input, kind: 'escalated' },
            {
              receiptId: rejection.receipt.receipt_id,
              receiptHash: rejection.receipt.chain.receipt_hash,
            },
          ),
          'rejected',
        );
        // Still unused: the call may run once.
        expect(
          appended(await decide({ sessionId, input, kind: 'escalated' }, cite)).receipt.policy
            .verdict,
        ).toBe('ALLOWED');
      });
    });
  });
}

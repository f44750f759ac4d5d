import { describe, expect, it } from '@jest/globals';
import type { Db } from 'mongodb';
import { COLLECTIONS } from '../../../src/storage/mongo/documents.js';
import { find } from 'mingo';
import {
  CALL_DISPOSITIONS_INDEX,
  decisionFilter,
  MongoSessions,
  SESSION_INDEXES,
  type AgentSessionDocument,
} from '../../../src/storage/mongo/mongo-sessions.js';
import { summaryOf, type SessionCounts } from '../../../src/storage/session-rows.js';
import { mingoDb } from '../../support/mingo-collections.js';

// The MongoDB session listing's filters, evaluated by mingo: `covered` must select exactly the
// sessions summaryOf (the rule of sessionCoverage) calls covered. The appends themselves run in
// the MongoDB contract suite (MONGODB_URI).

const COUNTS: SessionCounts[] = [];
for (const ran_without_allow of [0, 1])
  for (const outcomes of [0, 2])
    for (const unanswered of [0, 1])
      COUNTS.push({
        allowed: 2,
        blocked: 0,
        escalated: 1,
        dispositions: 0,
        outcomes,
        ran_without_allow,
        unanswered,
      });

async function seeded(): Promise<{ sessions: MongoSessions; docs: AgentSessionDocument[] }> {
  const db: Db = mingoDb();
  const docs = COUNTS.map((counts, i): AgentSessionDocument => ({
    ...counts,
    scope: i % 2 === 0 ? 'key:a' : 'key:b',
    session_id: `s${i}`,
    harness: i % 3 === 0 ? 'codex' : 'claude-code',
    agent: `bot-${i % 2}`,
    repository: null,
    first_sequence: i + 1,
    last_sequence: i + 1,
    first_seen: '2026-01-15T10:00:00.000Z',
    last_seen: '2026-01-15T10:00:00.000Z',
  }));
  for (const doc of docs)
    await db
      .collection(COLLECTIONS.agentSessions)
      .insertOne({ _id: doc.session_id, ...doc } as never);
  return { sessions: new MongoSessions(db, 3_600_000), docs };
}

const summary = (doc: AgentSessionDocument) => summaryOf({ ...doc, counts: doc });

describe('MongoSessions.list on mingo', () => {
  it.each([true, false])(
    'covered=%s selects the sessions summaryOf calls so, newest first',
    async (covered) => {
      const { sessions, docs } = await seeded();
      const expected = docs
        .filter((d) => summary(d).covered === covered)
        .map((d) => d.session_id)
        .reverse();
      expect(expected.length).toBeGreaterThan(0);
      const found = await sessions.list({ covered }, { limit: 100 });
      expect(found.map((s) => s.session_id)).toEqual(expected);
      expect(found.every((s) => s.covered === covered)).toBe(true);
    },
  );

  it('filters by scope, harness and agent, and pages before a first sequence', async () => {
    const { sessions } = await seeded();
    const ids = async (...args: Parameters<MongoSessions['list']>) =>
      (await sessions.list(...args)).map((s) => s.session_id);
    expect(await ids({ scope: 'key:b', harness: 'codex' }, { limit: 100 })).toEqual(['s3']);
    expect(await ids({ agent: 'bot-0' }, { limit: 2 })).toEqual(['s6', 's4']);
    expect(await ids({}, { limit: 2, before: 3 })).toEqual(['s1', 's0']);
  });
});

describe('MongoSessions session events on mingo', () => {
  it("answers a session's latest start, and its end while no start came after it", async () => {
    const { sessions } = await seeded();
    const at = '2026-11-28T10:00:00.000Z';
    const event = (kind: 'start' | 'end', reason: string | null, time = at, scope = 'key:a') =>
      sessions.recordEvent({ scope, session_id: 's0', harness: 'codex', kind, at: time, reason });
    const lifecycle = async () => {
      const s = (await sessions.get('s0', 'key:a'))!;
      return [s.started_at, s.ended_at, s.end_reason];
    };
    expect(await lifecycle()).toEqual([null, null, null]);
    await event('start', 'startup');
    await event('end', 'exit', at); // the same millisecond: arrival order decides
    await event('start', 'startup', '2026-11-28T11:00:00.000Z', 'key:b');
    expect(await lifecycle()).toEqual([at, at, 'exit']);
    await event('start', 'resume', '2026-11-28T10:05:00.000Z');
    expect(await lifecycle()).toEqual(['2026-11-28T10:05:00.000Z', null, null]);
    // The listing reads every session's events at once, and answers the same.
    await event('end', 'exit', '2026-11-28T10:06:00.000Z');
    const listed = await sessions.list({}, { limit: 100 });
    expect(listed.find((x) => x.session_id === 's0' && x.scope === 'key:a')).toEqual(
      await sessions.get('s0', 'key:a'),
    );
    expect(listed.filter((x) => x.ended_at !== null).map((x) => x.session_id)).toEqual(['s0']);
  });
});

describe('MongoSessions.projectDirOf on mingo', () => {
  it("answers the working directory of the session's latest start in its scope", async () => {
    const { sessions } = await seeded();
    const event = (kind: 'start' | 'end', cwd: string | undefined, scope = 'key:a') =>
      sessions.recordEvent({
        scope,
        session_id: 's0',
        harness: 'codex',
        kind,
        at: '2026-11-29T10:00:00.000Z',
        reason: null,
        ...(cwd !== undefined && { cwd }),
      });
    expect(await sessions.projectDirOf('key:a', 's0')).toBeNull();
    await event('start', undefined);
    expect(await sessions.projectDirOf('key:a', 's0')).toBeNull();
    await event('start', '/home/dev/web');
    await event('end', '/tmp');
    await event('start', '/home/dev/other', 'key:b');
    expect(await sessions.projectDirOf('key:a', 's0')).toBe('/home/dev/web');
    expect(await sessions.projectDirOf('key:b', 's0')).toBe('/home/dev/other');
    await event('start', '/home/dev/web2');
    expect(await sessions.projectDirOf('key:a', 's0')).toBe('/home/dev/web2');
  });
});

describe('MongoSessions.commitReports on mingo', () => {
  it('answers each commit and session once, in the order of the first report, within the limit', async () => {
    const db: Db = mingoDb();
    const [c1, c2, c3] = ['1', '2', '3'].map((d) => d.repeat(40)) as [string, string, string];
    // Session records as the appends write them: only outcomes carry a git_head.
    const rows: [number, string, string, string | null][] = [
      [1, 'key:a', 's1', null],
      [2, 'key:a', 's1', c1],
      [3, 'key:a', 's1', c1],
      [4, 'key:b', 's2', c1],
      [5, 'key:a', 's1', c2],
      [6, 'key:a', 's3', c3],
    ];
    for (const [sequence, scope, session_id, git_head] of rows)
      await db
        .collection(COLLECTIONS.sessionRecords)
        .insertOne({ _id: sequence, scope, session_id, git_head } as never);
    const sessions = new MongoSessions(db, 3_600_000);
    expect(await sessions.commitReports([c1, c2], 10)).toEqual([
      { commit: c1, scope: 'key:a', session_id: 's1' },
      { commit: c1, scope: 'key:b', session_id: 's2' },
      { commit: c2, scope: 'key:a', session_id: 's1' },
    ]);
    expect(await sessions.commitReports([c1, c2], 2)).toHaveLength(2);
    expect(await sessions.commitReports([], 10)).toEqual([]);
  });
});

describe('MongoDB open-approval lookup', () => {
  it("reads a call's dispositions through the partial index it names, and finds the open approval", async () => {
    const db: Db = mingoDb();
    const records = db.collection(COLLECTIONS.sessionRecords);
    // The find options the lookup passes: every handle of the collection records them.
    const options: unknown[] = [];
    const collection = db.collection.bind(db);
    db.collection = ((name: string) => {
      const handle = collection(name);
      if (name !== COLLECTIONS.sessionRecords) return handle;
      const find = handle.find.bind(handle);
      handle.find = ((filter: never, opts?: unknown) => {
        options.push(opts);
        return find(filter, opts as never);
      }) as typeof handle.find;
      return handle;
    }) as typeof db.collection;
    const call = {
      scope: 'key:a',
      session_id: 's1',
      tool_name: 'Bash',
      input_digest: `sha256:${'a'.repeat(64)}`,
    };
    const at = '2026-01-15T10:00:00.000Z';
    for (const doc of [
      { _id: 1, ...call, kind: 'decision', verdict: 'ESCALATED', receipt_id: 'r1', issued_at: at },
      {
        _id: 2,
        ...call,
        kind: 'disposition',
        verdict: 'ALLOWED',
        receipt_id: 'r2',
        receipt_hash: 'h2',
        issued_at: at,
      },
    ])
      await records.insertOne(doc as never);
    const sessions = new MongoSessions(db, 3_600_000);
    const key = {
      scope: call.scope,
      sessionId: call.session_id,
      toolName: call.tool_name,
      inputDigest: call.input_digest,
    };
    expect(await sessions.openApproval(key, '2026-01-15T09:00:00.000Z')).toEqual({
      receiptId: 'r2',
      receiptHash: 'h2',
      issuedAt: at,
    });
    expect(await sessions.openApproval({ ...key, toolName: 'Edit' }, at)).toBeNull();
    expect(options).toHaveLength(2);
    for (const o of options) expect(o).toMatchObject({ hint: CALL_DISPOSITIONS_INDEX });
    // The index exists, over the lookup's equality fields, holding dispositions only: a hint
    // naming another index, or one the lookup's filter does not satisfy, fails on a server.
    const index = SESSION_INDEXES[COLLECTIONS.sessionRecords]!.find(
      (i) => i.name === CALL_DISPOSITIONS_INDEX,
    );
    expect(Object.keys(index!.key)).toEqual([
      'scope',
      'session_id',
      'tool_name',
      'input_digest',
      '_id',
    ]);
    expect(index!.partialFilterExpression).toEqual({ kind: 'disposition' });
  });
});

describe('decisionFilter on mingo', () => {
  const digest = `sha256:${'a'.repeat(64)}`;
  const row = (tool_name: string, extra: Record<string, unknown> = {}) => ({
    scope: 'key:a',
    session_id: 's1',
    kind: 'decision',
    tool_name,
    input_digest: digest,
    tool_use_id: 'toolu_1',
    ...extra,
  });
  const rows = [
    row('mcp__db.example:3000__query_%_v1'),
    row('mcp__db.example:3000__queryX%_v1'),
    row('mcp__db.example:3000__run_query_%_v1'),
    row('Bash'),
    row('mcp__db.example:3000__query_%_v1', { kind: 'outcome' }),
    row('mcp__db.example:3000__query_%_v1', { session_id: 's2' }),
  ];
  const matched = (key: Parameters<typeof decisionFilter>[0]) =>
    find(rows, decisionFilter(key)!)
      .all()
      .map((r) => (r as { tool_name: string }).tool_name);
  const key = { scope: 'key:a', sessionId: 's1', toolName: 'mcp__unknown__query_%_v1' };

  it("an MCP tool of any server: the session's MCP decisions with the digest, for the names to be read", () => {
    expect(matched({ ...key, inputDigest: digest, mcpToolOfAnyServer: 'query_%_v1' })).toEqual([
      'mcp__db.example:3000__query_%_v1',
      'mcp__db.example:3000__queryX%_v1',
      'mcp__db.example:3000__run_query_%_v1',
    ]);
    expect(matched({ ...key, inputDigest: digest })).toEqual([]);
  });

  it('a tool by name and tool-use id; no key, no filter', () => {
    expect(matched({ ...key, toolName: 'Bash', toolUseId: 'toolu_1' })).toEqual(['Bash']);
    expect(decisionFilter(key)).toBeNull();
  });
});

import type { SessionDetail } from '../data.js';
import { badge, count, receiptHref, time } from '../format.js';
import { html, type Html } from '../html.js';
import type { PageView } from '../layout.js';

type SessionRecord = SessionDetail['records'][number];

/** The redacted summary of a call, as the claim signed it (contract §12). */
interface Summary {
  command?: string;
  paths?: string[];
  urls?: string[];
  mcp_server?: string;
  mcp_tool?: string;
}

const summaryOf = (record: SessionRecord): Summary =>
  ((record.tool as { summary?: Summary } | null)?.summary ?? {}) as Summary;

/** What the call would do: its command, else its paths, URLs or MCP tool. */
function whatItDoes(record: SessionRecord): Html {
  const s = summaryOf(record);
  const parts: Html[] = [];
  if (s.command) parts.push(html`<code class="content">${s.command}</code>`);
  if (s.paths?.length)
    parts.push(
      html`<span>paths ${s.paths.map((p, i) => html`${i ? ', ' : ''}<code>${p}</code>`)}</span>`,
    );
  if (s.urls?.length)
    parts.push(
      html`<span>URLs ${s.urls.map((u, i) => html`${i ? ', ' : ''}<code>${u}</code>`)}</span>`,
    );
  if (s.mcp_server)
    parts.push(html`<span>MCP <code>${s.mcp_server}/${s.mcp_tool ?? ''}</code></span>`);
  // The commit the call left as HEAD: what ties a pull request's commits to this session.
  if (record.git_head) parts.push(html`<span>HEAD after it <code>${record.git_head}</code></span>`);
  return parts.length ? html`${parts.map((p, i) => html`${i ? html`<br />` : ''}${p}`)}` : html`—`;
}

const KIND_LABEL: Record<SessionRecord['kind'], string> = {
  decision: 'Decision',
  disposition: 'Reviewer',
  outcome: 'Outcome',
};

/** A reviewer's decision as its receipt signed it (contract §11). */
interface Decided {
  decision: string;
  reviewer: { id: string; name?: string };
  reason: string;
}

const decidedOf = (record: SessionRecord): Decided | null =>
  ((record.receipt as { disposition?: Decided }).disposition ?? null) as Decided | null;

/** Who decided and why: `approved by Sam (sam@acme) — "release 1.2.0"`. */
function decidedBy(d: Decided): Html {
  const who = d.reviewer.name ? `${d.reviewer.name} (${d.reviewer.id})` : d.reviewer.id;
  return html`${d.decision === 'approve' ? 'approved' : 'rejected'} by ${who}: <q>${d.reason}</q>`;
}

/**
 * What became of a record: a reviewer's decision says who and why; an escalated call says
 * which decision on this page settled it, or that it waits for one.
 */
function settled(record: SessionRecord, decisions: Map<string, SessionRecord>): Html {
  if (record.kind === 'disposition') {
    const d = decidedOf(record);
    return d ? html`<br /><span class="decided">${decidedBy(d)}</span>` : html``;
  }
  if (record.kind !== 'decision' || record.verdict !== 'ESCALATED') return html``;
  const by = decisions.get(record.receipt_id);
  const d = by && decidedOf(by);
  return d
    ? html`<br /><span class="decided">${decidedBy(d)} (#${by.sequence})</span>`
    : html`<br /><span>waiting for a reviewer</span>`;
}

function recordRow(record: SessionRecord, decisions: Map<string, SessionRecord>): Html {
  const loud = record.ran_without_allow;
  return html`<tr class="${loud ? 'ran-without-allow' : ''}">
    <td>${record.sequence}</td>
    <td>${time(record.issued_at)}</td>
    <td>${KIND_LABEL[record.kind]}</td>
    <td><code>${record.tool_name}</code></td>
    <td>${whatItDoes(record)}</td>
    <td>
      ${badge(record.verdict)}
      ${loud ? html`<strong class="badge bad">RAN WITHOUT ALLOW</strong>` : ''}
      ${settled(record, decisions)}
    </td>
    <td>
      <a href="${receiptHref(record.receipt_id)}">${record.receipt_id}</a>
      ${
        record.parent_receipt_id
          ? html`<br />of
              <a href="${receiptHref(record.parent_receipt_id)}">${record.parent_receipt_id}</a>`
          : ''
      }
    </td>
  </tr>`;
}

/** What the harness's session start and end events said, if it sent them. */
function lifecycle(session: SessionDetail['session']): Html {
  const started = session.started_at ? html`started ${time(session.started_at)}` : null;
  const ended = session.ended_at
    ? html`ended
      ${time(session.ended_at)}${session.end_reason ? html` (${session.end_reason})` : ''}`
    : null;
  if (started && ended) return html`${started}, ${ended}`;
  if (ended) return ended;
  if (started) return html`${started}, open: no end event yet`;
  return html`no start or end event from the harness`;
}

/** An agent session (contract §12): its coverage, counts and every record in ledger order. */
export function renderSession(data: SessionDetail): PageView {
  const { session, records } = data;
  const title = `Session ${session.session_id}`;
  // Each escalated call's reviewer decision, when it is on this page.
  const decisions = new Map(
    records
      .filter((r) => r.kind === 'disposition' && r.parent_receipt_id !== null)
      .map((r) => [r.parent_receipt_id!, r]),
  );
  const d = session.decisions;
  return {
    title,
    body: html`<h1 id="page-title">${title}</h1>
      ${
        session.ran_without_allow > 0
          ? html`<p class="alert bad" role="alert">
              ${count(session.ran_without_allow)} call${session.ran_without_allow === 1 ? '' : 's'}
              ran without an ALLOWED decision: the gate was bypassed.
            </p>`
          : ''
      }
      <section aria-labelledby="coverage-heading">
        <h2 id="coverage-heading">Coverage</h2>
        <dl class="facts">
          <dt>Covered</dt>
          <dd>
            ${badge(session.covered ? 'PASS' : 'FAIL')}
            ${
              session.covered
                ? 'every reported call had an ALLOWED decision and its outcome'
                : 'not every reported call was decided and reported'
            }
          </dd>
          <dt>Harness</dt>
          <dd>${session.harness}</dd>
          ${
            session.agent
              ? html`<dt>Agent</dt>
                  <dd>${session.agent}</dd>`
              : ''
          }
          ${
            session.repository
              ? html`<dt>Repository</dt>
                  <dd>${session.repository}</dd>`
              : ''
          }
          <dt>Seen</dt>
          <dd>${time(session.first_seen)} to ${time(session.last_seen)}</dd>
          <dt>Session</dt>
          <dd>${lifecycle(session)}</dd>
          <dt>Decisions</dt>
          <dd>
            ${count(d.ALLOWED)} ${badge('ALLOWED')} ${count(d.BLOCKED)} ${badge('BLOCKED')}
            ${count(d.ESCALATED)} ${badge('ESCALATED')}
          </dd>
          <dt>Reviewer decisions</dt>
          <dd>${count(session.dispositions)}</dd>
          <dt>Outcomes</dt>
          <dd>
            ${count(session.outcomes)}, of which ${count(session.ran_without_allow)} ran without
            allow; ${count(session.missing_outcomes)} allowed calls without an outcome
          </dd>
        </dl>
        <p>
          Coverage says what the harness reported; a call the harness never reported cannot be seen
          here.
        </p>
      </section>
      <section aria-labelledby="records-heading">
        <h2 id="records-heading">Calls in order</h2>
        ${
          records.length === 0
            ? html`<p>No record.</p>`
            : html`<table class="session-records">
                <thead>
                  <tr>
                    <th scope="col">#</th>
                    <th scope="col">Time</th>
                    <th scope="col">Record</th>
                    <th scope="col">Tool</th>
                    <th scope="col">What it does</th>
                    <th scope="col">Verdict</th>
                    <th scope="col">Receipt</th>
                  </tr>
                </thead>
                <tbody>
                  ${records.map((record) => recordRow(record, decisions))}
                </tbody>
              </table>`
        }
        ${
          data.next_after !== null
            ? html`<p>
                <a href="?after=${String(data.next_after)}">Later records</a>
              </p>`
            : ''
        }
      </section>`,
  };
}

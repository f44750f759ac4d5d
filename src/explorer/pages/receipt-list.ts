import type { ListData, ListedReceipt, ListFilter } from '../data.js';
import { badge, pullRequestHref, receiptHref, time } from '../format.js';
import { html, queryString, type Html } from '../html.js';
import type { PageView } from '../layout.js';

const VERDICTS = ['ALLOWED', 'BLOCKED', 'ESCALATED'];
const STATUSES = ['ACCEPTED', 'NON_DETERMINISTIC', 'REJECTED'];

/** A select of values, each [value, text]; the first is chosen when none is. */
const select = (
  name: string,
  label: string,
  options: [string, string][],
  chosen: string | undefined,
) =>
  html`<div class="field">
    <label for="f-${name}">${label}</label>
    <select id="f-${name}" name="${name}">
      ${options.map(([value, text]) => html`<option value="${value}" ${value === (chosen ?? '') ? html` selected` : ''}>${text}</option>`)}
    </select>
  </div>`;

const anyOf = (values: string[]): [string, string][] => [
  ['', 'any'],
  ...values.map((v): [string, string] => [v, v]),
];

const input = (name: string, label: string, value: string | undefined, hint?: string) =>
  html`<div class="field">
    <label for="f-${name}">${label}</label>
    <input
      id="f-${name}"
      name="${name}"
      type="search"
      value="${value ?? ''}"
      ${hint ? html` aria-describedby="f-${name}-hint"` : ''}
    />
    ${hint ? html`<small id="f-${name}-hint">${hint}</small>` : ''}
  </div>`;

// A list row shows the start of a claim; its page shows all of it.
const CLAIM_SHOWN = 160;
const shortened = (text: string) =>
  text.length <= CLAIM_SHOWN ? text : `${text.slice(0, CLAIM_SHOWN).trimEnd()}…`;

// Each cell names its column (data-label): on a narrow screen the rows stack, one cell a line.
function row(r: ListedReceipt, page: ListData['page']): Html {
  const s = r.subject;
  const claim = page.claims?.[r.receipt_id];
  const decided = page.dispositions?.[r.receipt_id];
  return html`<tr>
    <td data-label="Seq.">${r.chain.sequence}</td>
    <th scope="row" data-label="Receipt">
      <a href="${receiptHref(r.receipt_id)}"><code class="hash">${r.receipt_id}</code></a>
    </th>
    <td data-label="Claim" class="claim">${claim === undefined ? '' : shortened(claim)}</td>
    <td data-label="Issued">${time(r.issued_at)}</td>
    <td data-label="Verdict">
      ${badge(r.policy.verdict)}
      ${badge(r.admissibility.status)}${
        decided
          ? html`, ${decided.decision === 'approve' ? 'approved' : 'rejected'} by
              <code>${decided.reviewer.id}</code>`
          : ''
      }
    </td>
    <td data-label="Agent">${s.agent ?? ''}</td>
    <td data-label="Repository">
      ${s.repository ?? s.entity ?? ''}${
        s.repository && s.pull_request !== undefined
          ? html` <a href="${pullRequestHref(s.repository, s.pull_request)}">#${s.pull_request}</a>`
          : ''
      }
    </td>
  </tr>`;
}

/** The filterable list: a GET form (works without script), the page and the next cursor. */
export function renderReceiptList(data: ListData): PageView {
  const { filter, page } = data;
  const kept: ListFilter = { ...filter };
  delete kept.after;
  const next =
    page.next_after === null
      ? null
      : `/explorer/receipts${queryString({ ...kept, after: page.next_after })}`;
  const filtered = Object.keys(kept).some((k) => k !== 'order');
  return {
    title: 'Receipts',
    body: html`<h1 id="page-title">Receipts</h1>
      <form
        class="filters"
        method="get"
        action="/explorer/receipts"
        role="search"
        aria-label="Filter receipts"
      >
        ${input('q', 'Words', filter.q, 'Whole words by prefix in the claim, entity, repository and agent')}
        ${input('agent', 'Agent', filter.agent)}
        ${input('repo', 'Repository', filter.repo, 'Exactly, e.g. acme/web')}
        ${select('verdict', 'Verdict', anyOf(VERDICTS), filter.verdict)}
        ${select('status', 'Admissibility', anyOf(STATUSES), filter.status)}
        ${select(
          'order',
          'Order',
          [
            ['', 'newest first'],
            ['asc', 'oldest first'],
          ],
          filter.order === 'desc' ? '' : filter.order,
        )}
        <div class="actions">
          <button type="submit">Filter</button> <a href="/explorer/receipts">Clear</a>
        </div>
      </form>
      <section aria-labelledby="results-heading">
        <h2 id="results-heading">
          ${filtered ? 'Matching receipts' : 'All receipts'}${filter.after ? ` after sequence ${filter.after}` : ''}
        </h2>
        ${
          page.receipts.length === 0
            ? html`<p id="no-results">No receipt matches.</p>`
            : html`<table class="receipts stack">
                <caption>
                  ${page.receipts.length} ${page.receipts.length === 1 ? 'receipt' : 'receipts'},
                  ${page.order === 'asc' ? 'oldest' : 'newest'} first
                </caption>
                <thead>
                  <tr>
                    <th scope="col">Seq.</th>
                    <th scope="col">Receipt</th>
                    <th scope="col">Claim</th>
                    <th scope="col">Issued</th>
                    <th scope="col">Verdict · admissibility</th>
                    <th scope="col">Agent</th>
                    <th scope="col">Repository</th>
                  </tr>
                </thead>
                <tbody>
                  ${page.receipts.map((r) => row(r, page))}
                </tbody>
              </table>`
        }
        <nav aria-label="Pages">
          <ul class="pager">
            ${filter.after ? html`<li><a href="/explorer/receipts${queryString(kept)}">First page</a></li>` : ''}
            ${next ? html`<li><a rel="next" href="${next}">Next page</a></li>` : html`<li>Last page</li>`}
          </ul>
        </nav>
      </section>`,
  };
}

import type { DeploymentData, DeploymentsData, ListedReceipt, SearchPage } from '../data.js';
import { DEPLOYMENTS_SCANNED } from '../data.js';
import {
  badge,
  deploymentHref,
  deploymentRunOf,
  receiptHref,
  time,
  DEPLOYMENTS_PATH,
} from '../format.js';
import { html, queryString, type Html } from '../html.js';
import type { PageView } from '../layout.js';
import { decideByApi, decideForm } from './decide-form.js';

type Disposition = NonNullable<SearchPage['dispositions']>[string];

/**
 * The deployments' own receipts: a disposition receipt carries its parent's subject, so it is
 * found with them, and is shown on its parent's row rather than as a deployment of its own.
 */
const deploymentsOf = (page: SearchPage): ListedReceipt[] =>
  page.receipts.filter((r) => !r.disposition);

const decisionBadge = (d: Disposition | undefined): Html =>
  d ? html` ${badge(d.decision === 'approve' ? 'APPROVED' : 'REJECTED')}` : html``;

/** Who started the deployment, as the receipt's subject records it: an agent, else unnamed. */
const actorOf = (r: ListedReceipt): Html =>
  r.subject.agent ? html`agent <code>${r.subject.agent}</code>` : html`a person (see the receipt)`;

function decisionRow(r: ListedReceipt, page: SearchPage): Html {
  const run = deploymentRunOf(r.claim_id);
  const decided = page.dispositions?.[r.receipt_id];
  return html`<tr data-receipt-id="${r.receipt_id}">
    <th scope="row" data-label="Receipt">
      <a href="${receiptHref(r.receipt_id)}"><code>${r.receipt_id}</code></a>
    </th>
    <td data-label="Verdict">
      ${badge(r.policy.verdict)}${decisionBadge(decided)}
      ${
        decided
          ? html`<br /><a href="${receiptHref(decided.receipt_id)}">decided</a> by
              <code>${decided.reviewer.id}</code>`
          : ''
      }
    </td>
    <td data-label="Commit"><code class="hash">${r.subject.commit ?? 'none'}</code></td>
    <td data-label="Ref"><code>${r.subject.branch ?? 'none'}</code></td>
    <td data-label="Run">${run === null ? '—' : html`<code>${String(run)}</code>`}</td>
    <td data-label="Actor">${actorOf(r)}</td>
    <td data-label="Time">${time(r.issued_at)}</td>
  </tr>`;
}

/**
 * One waiting escalation: what it would deploy, the form the page's script shows (Approve or
 * Reject with the reviewer key kept in this tab) and the equivalent API call.
 */
function pendingItem(r: ListedReceipt, index: number, claim: string | undefined): Html {
  return html`<li class="pending" data-receipt-id="${r.receipt_id}">
    <p>
      <a href="${receiptHref(r.receipt_id)}"><code>${r.receipt_id}</code></a> ${badge('ESCALATED')}
      ${claim ?? ''}, ${time(r.issued_at)}
    </p>
    ${decideForm(r.receipt_id, `decide-${index}`)}
    ${decideByApi(
      r.receipt_id,
      'rejects the deployment. GitHub is answered once the decision is recorded.',
    )}
  </li>`;
}

/** One repository's environment: its escalations waiting for a person, then every decision. */
export function renderDeployment(data: DeploymentData): PageView {
  const { page } = data;
  const title = `Deployments of ${data.repository} to ${data.environment}`;
  const receipts = deploymentsOf(page);
  const pending = receipts.filter(
    (r) => r.policy.verdict === 'ESCALATED' && !page.dispositions?.[r.receipt_id],
  );
  return {
    title,
    body: html`<h1 id="page-title">${title}</h1>
      <section id="pending" aria-labelledby="pending-heading">
        <h2 id="pending-heading">Waiting for a decision</h2>
        ${
          pending.length === 0
            ? html`<p>No escalated deployment among these decisions waits for a person.</p>`
            : html`<p>
                  These deployments were escalated: each waits until a reviewer approves or rejects
                  it. Deciding needs an API key with the reviewer capability; it is kept in this
                  browser tab only.
                </p>
                <ol class="pending-list">
                  ${pending.map((r, i) => pendingItem(r, i, page.claims?.[r.receipt_id]))}
                </ol>`
        }
      </section>
      <section aria-labelledby="decisions-heading">
        <h2 id="decisions-heading">Decisions, newest first</h2>
        ${
          receipts.length === 0
            ? html`<p>No deployment receipt for this environment.</p>`
            : html`<div
                class="scroll"
                tabindex="0"
                role="region"
                aria-labelledby="decisions-heading"
              >
                <table class="stack deployments">
                  <thead>
                    <tr>
                      <th scope="col">Receipt</th>
                      <th scope="col">Verdict</th>
                      <th scope="col">Commit</th>
                      <th scope="col">Ref</th>
                      <th scope="col">Run</th>
                      <th scope="col">Actor</th>
                      <th scope="col">Time</th>
                    </tr>
                  </thead>
                  <tbody>
                    ${receipts.map((r) => decisionRow(r, page))}
                  </tbody>
                </table>
              </div>`
        }
        ${
          page.next_after !== null
            ? html`<p>
                <a href="${queryString({ after: page.next_after })}">Older decisions</a>
              </p>`
            : ''
        }
        <p><a href="${DEPLOYMENTS_PATH}">Every environment</a></p>
      </section>`,
  };
}

/** The repository/environment pairs of the newest deployment receipts, in name order. */
export function renderDeployments(data: DeploymentsData): PageView {
  const pairs = new Map<string, { repository: string; environment: string; last: ListedReceipt }>();
  for (const r of deploymentsOf(data.page)) {
    const repository = r.subject.repository ?? '';
    const environment = r.subject.environment ?? '';
    const key = JSON.stringify([repository, environment]);
    // Newest first: the first receipt of a pair is its latest decision.
    if (!pairs.has(key)) pairs.set(key, { repository, environment, last: r });
  }
  const rows = [...pairs.values()].sort(
    (a, b) =>
      a.repository.localeCompare(b.repository) || a.environment.localeCompare(b.environment),
  );
  return {
    title: 'Deployments',
    body: html`<h1 id="page-title">Deployments</h1>
      <p>
        The environments that the newest ${String(DEPLOYMENTS_SCANNED)} deployment receipts name,
        each with its latest decision.
      </p>
      ${
        rows.length === 0
          ? html`<p>No deployment receipt yet.</p>`
          : html`<table class="environments">
              <thead>
                <tr>
                  <th scope="col">Repository</th>
                  <th scope="col">Environment</th>
                  <th scope="col">Latest decision</th>
                </tr>
              </thead>
              <tbody>
                ${rows.map((p) => {
                  const href = deploymentHref(p.repository, p.environment);
                  return html`<tr>
                    <td>${p.repository}</td>
                    <th scope="row">
                      ${href ? html`<a href="${href}">${p.environment}</a>` : p.environment}
                    </th>
                    <td>
                      ${badge(p.last.policy.verdict)}${decisionBadge(
                        data.page.dispositions?.[p.last.receipt_id],
                      )}
                      ${time(p.last.issued_at)}
                    </td>
                  </tr>`;
                })}
              </tbody>
            </table>`
      }`,
  };
}

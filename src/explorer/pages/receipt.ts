import type { Source } from '../../core/claim-schema.js';
import type { Receipt } from '../../core/receipt.js';
import type { ReceiptData } from '../data.js';
import { badge, hash, pullRequestHref, receiptHref, sessionHref, time } from '../format.js';
import { externalLink, html, type Html } from '../html.js';
import type { PageView } from '../layout.js';
import { escalationCausesOf } from '../../core/policy-reason.js';
import { decisionSummary, dispositionSection } from './disposition.js';
import { downloadsSection } from './downloads.js';
import { deploymentSection } from './merge-receipts.js';
import { toolCallSection } from './tool-call.js';
import { verifySection } from './verify-section.js';

function submitterView(receipt: Receipt): Html {
  const s = receipt.submitter;
  if (!s) return html`<p>Not signed (${receipt.signed_fields.contract} signs no submitter).</p>`;
  return s.kind === 'api_key'
    ? html`<p>API key <code>${s.key_id}</code></p>`
    : html`<p>
        GitHub App <code>${s.app_id}</code>, installation <code>${s.installation_id}</code>
      </p>`;
}

function sourceRow(s: Source): Html {
  const p = s.provenance;
  return html`<tr>
    <th scope="row" data-label="Source"><code>${s.id}</code></th>
    <td data-label="Type">${s.type}</td>
    <td data-label="Confidence">${s.confidence}</td>
    <td data-label="Admissibility">
      ${s.admissibility ? html`${badge(s.admissibility.state)}${s.admissibility.reason ? html` ${s.admissibility.reason}` : ''}${s.admissibility.required ? ' (required)' : ''}` : 'not stated'}
    </td>
    <td data-label="URI">${externalLink(s.uri)}</td>
    <td data-label="Provenance">
      ${p ? html`captured ${time(p.captured_at)}${p.collector ? html`, by <code>${p.collector}</code>` : ''}${p.snapshot_id ? html`, snapshot <code>${p.snapshot_id}</code>` : ''}${p.chain_of_custody?.length ? html`, custody: ${p.chain_of_custody.join(' → ')}` : ''}` : 'none given'}
    </td>
    <td class="content" data-label="Content">${s.content}</td>
  </tr>`;
}

/**
 * A link along the chain, or why there is none, as a reviewer reads it: the first receipt has
 * no previous one, the newest no next one yet, and a neighbour of another account is not
 * shown (private reads).
 */
function neighbour(label: 'Previous' | 'Next', data: ReceiptData): Html {
  const n = label === 'Previous' ? data.previous : data.next;
  const rel = label === 'Previous' ? 'prev' : 'next';
  if (n)
    return html`<li>
      <a rel="${rel}" href="${receiptHref(n.receipt_id)}"
        >${label}: sequence ${n.sequence} (<code class="hash">${n.receipt_id}</code>)</a
      >
    </li>`;
  const sequence = data.response.receipt.chain.sequence;
  const why =
    label === 'Previous'
      ? sequence <= 1
        ? 'none, this is the first receipt of the ledger'
        : `sequence ${sequence - 1} is another account’s receipt, not shown to you`
      : data.head !== undefined && data.head <= sequence
        ? 'none yet, this is the newest receipt'
        : `sequence ${sequence + 1} is not shown to you (another account’s receipt)`;
  return html`<li>${label}: ${why}</li>`;
}

/**
 * The rule rows: every rule of the policy, then what escalated the receipt that is no rule (a
 * sensitive action without a human approval), so that an escalation's cause is a row of its
 * own and not only words in the policy reason.
 */
function ruleRows(response: ReceiptData['response']): Html[] {
  const rows = response.policy.rules.map(
    (r) =>
      html`<tr>
        <th scope="row" data-label="Rule"><code>${r.rule}</code></th>
        <td data-label="Result">${badge(r.passed ? 'PASS' : 'FAIL')}</td>
        <td data-label="Reason">${r.reason}</td>
      </tr>`,
  );
  if (response.policy.verdict !== 'ESCALATED') return rows;
  const causes = escalationCausesOf(response.policy.reason, response.policy.rules);
  // A reason in words this explorer does not know: the whole reason is the cause.
  const failed = response.policy.rules.some((r) => !r.passed);
  const shown = causes.length > 0 || failed ? causes : [response.policy.reason];
  return [
    ...rows,
    ...shown.map(
      (cause) =>
        html`<tr class="cause">
          <th scope="row" data-label="Rule">sensitive action</th>
          <td data-label="Result">${badge('ESCALATED')}</td>
          <td data-label="Reason">${cause}: a human decides</td>
        </tr>`,
    ),
  ];
}

/** One receipt: outcome, rules, sources, submitter, policy, chain, disposition, verify, JSON. */
export function renderReceipt(data: ReceiptData): PageView {
  const { response } = data;
  const { receipt, claim } = response;
  const s = receipt.subject;
  // A tool call's session (contract §12), whose page shows every call of it in order.
  const session = (claim.action as { session?: { id?: unknown } } | undefined)?.session;
  const sessionId = typeof session?.id === 'string' ? session.id : null;
  const title = `Receipt ${receipt.receipt_id}`;
  return {
    title,
    body: html`<h1 id="page-title">${title}</h1>
      ${decisionSummary(data)}
      <section aria-labelledby="outcome-heading">
        <h2 id="outcome-heading">Outcome</h2>
        <dl class="facts">
          <dt>Verdict</dt>
          <dd>${badge(receipt.policy.verdict)}</dd>
          <dt>Admissibility</dt>
          <dd>${badge(receipt.admissibility.status)} ${receipt.admissibility.reason}</dd>
          <dt>Decision</dt>
          <dd>${response.decision.reason}</dd>
          <dt>Policy reason</dt>
          <dd>${response.policy.reason}</dd>
          <dt>Issued</dt>
          <dd>${time(receipt.issued_at)}</dd>
          <dt>Claim</dt>
          <dd class="content">${claim.claim}</dd>
          <dt>Claim id</dt>
          <dd><code class="hash">${receipt.claim_id}</code></dd>
          <dt>Entity</dt>
          <dd>${claim.entity}</dd>
          ${
            s.agent
              ? html`<dt>Agent</dt>
                  <dd>${s.agent}</dd>`
              : ''
          }
          ${
            sessionId
              ? html`<dt>Session</dt>
                  <dd><a href="${sessionHref(sessionId)}">${sessionId}</a></dd>`
              : ''
          }
          ${
            s.repository
              ? html`<dt>Repository</dt>
                  <dd>
                    ${s.repository}${s.pull_request !== undefined ? html`, <a href="${pullRequestHref(s.repository, s.pull_request)}">pull request #${s.pull_request}</a>` : ''}
                  </dd>`
              : ''
          }
          ${
            s.commit
              ? html`<dt>Commit</dt>
                  <dd><code class="hash">${s.commit}</code></dd>`
              : ''
          }
        </dl>
      </section>
      ${toolCallSection(claim)} ${deploymentSection(data)}
      <section aria-labelledby="rules-heading">
        <h2 id="rules-heading">Rules</h2>
        <table class="rules stack">
          <caption>
            Each rule of the policy and its
            reason${response.policy.verdict === 'ESCALATED' ? ', and what escalated it' : ''}
          </caption>
          <thead>
            <tr>
              <th scope="col">Rule</th>
              <th scope="col">Result</th>
              <th scope="col">Reason</th>
            </tr>
          </thead>
          <tbody>
            ${ruleRows(response)}
          </tbody>
        </table>
      </section>
      <section aria-labelledby="sources-heading">
        <h2 id="sources-heading">Sources</h2>
        <div class="scroll" tabindex="0" role="region" aria-labelledby="sources-heading">
          <table class="sources stack">
            <caption>
              ${claim.sources.length} sources with their provenance
            </caption>
            <thead>
              <tr>
                <th scope="col">Source</th>
                <th scope="col">Type</th>
                <th scope="col">Confidence</th>
                <th scope="col">Admissibility</th>
                <th scope="col">URI</th>
                <th scope="col">Provenance</th>
                <th scope="col">Content</th>
              </tr>
            </thead>
            <tbody>
              ${claim.sources.map(sourceRow)}
            </tbody>
          </table>
        </div>
        <p>Inputs hash ${hash(receipt.evidence.inputs_hash)}</p>
      </section>
      <section aria-labelledby="submitter-heading">
        <h2 id="submitter-heading">Submitter</h2>
        ${submitterView(receipt)}
      </section>
      <section aria-labelledby="policy-heading">
        <h2 id="policy-heading">Policy</h2>
        <dl class="facts">
          <dt>Name</dt>
          <dd>
            <code>${receipt.policy.name ?? 'not signed'}</code
            >${receipt.policy.overrides ? ' (overridden by the claim)' : ''}
          </dd>
          <dt>Config hash</dt>
          <dd>${hash(receipt.policy.config_hash)}</dd>
          <dt>Contract</dt>
          <dd><code>${receipt.signed_fields.contract}</code></dd>
          <dt>Signed by key</dt>
          <dd>${receipt.attestations.map((a) => html`<code class="hash">${a.key_id}</code> `)}</dd>
        </dl>
      </section>
      <section aria-labelledby="chain-heading">
        <h2 id="chain-heading">Chain position</h2>
        <dl class="facts">
          <dt>Sequence</dt>
          <dd>
            ${receipt.chain.sequence}${receipt.position ? html` of <code>${receipt.position.log}</code>` : ''}
          </dd>
          <dt>Previous receipt hash</dt>
          <dd>${hash(receipt.chain.previous_receipt_hash)}</dd>
          <dt>Receipt hash</dt>
          <dd>${hash(receipt.chain.receipt_hash)}</dd>
        </dl>
        <nav aria-label="Along the chain">
          <ul>
            ${neighbour('Previous', data)} ${neighbour('Next', data)}
          </ul>
        </nav>
      </section>
      ${dispositionSection(data)} ${verifySection(receipt)} ${downloadsSection(receipt.receipt_id)}
      <section aria-labelledby="json-heading">
        <h2 id="json-heading">Raw JSON</h2>
        <details>
          <summary>The receipt as the API serves it</summary>
          <pre class="json" tabindex="0">${JSON.stringify(receipt, null, 2)}</pre>
        </details>
      </section>`,
  };
}

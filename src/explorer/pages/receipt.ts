import type { Source } from '../../core/claim-schema.js';
import type { Receipt } from '../../core/receipt.js';
import type { ReceiptData } from '../data.js';
import { badge, hash, pullRequestHref, receiptHref, time } from '../format.js';
import { externalLink, html, type Html } from '../html.js';
import type { PageView } from '../layout.js';
import { dispositionSection } from './disposition.js';
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
    <th scope="row"><code>${s.id}</code></th>
    <td>${s.type}</td>
    <td>${s.confidence}</td>
    <td>
      ${s.admissibility ? html`${badge(s.admissibility.state)}${s.admissibility.reason ? html` ${s.admissibility.reason}` : ''}${s.admissibility.required ? ' (required)' : ''}` : 'not stated'}
    </td>
    <td>${externalLink(s.uri)}</td>
    <td>
      ${p ? html`captured ${time(p.captured_at)}${p.collector ? html`, by <code>${p.collector}</code>` : ''}${p.snapshot_id ? html`, snapshot <code>${p.snapshot_id}</code>` : ''}${p.chain_of_custody?.length ? html`, custody: ${p.chain_of_custody.join(' → ')}` : ''}` : 'none given'}
    </td>
    <td class="content">${s.content}</td>
  </tr>`;
}

const neighbour = (label: string, n: ReceiptData['previous'], rel: string) =>
  n
    ? html`<li>
        <a rel="${rel}" href="${receiptHref(n.receipt_id)}"
          >${label}: sequence ${n.sequence} (${n.receipt_id})</a
        >
      </li>`
    : html`<li>${label}: none readable</li>`;

/** One receipt: outcome, rules, sources, submitter, policy, chain, disposition, verify, JSON. */
export function renderReceipt(data: ReceiptData): PageView {
  const { response } = data;
  const { receipt, claim } = response;
  const s = receipt.subject;
  const title = `Receipt ${receipt.receipt_id}`;
  return {
    title,
    body: html`<h1 id="page-title">${title}</h1>
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
          <dd><code>${receipt.claim_id}</code></dd>
          <dt>Entity</dt>
          <dd>${claim.entity}</dd>
          ${
            s.agent
              ? html`<dt>Agent</dt>
                  <dd>${s.agent}</dd>`
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
                  <dd><code>${s.commit}</code></dd>`
              : ''
          }
        </dl>
      </section>
      <section aria-labelledby="rules-heading">
        <h2 id="rules-heading">Rules</h2>
        <table>
          <caption>
            Each rule of the policy and its reason
          </caption>
          <thead>
            <tr>
              <th scope="col">Rule</th>
              <th scope="col">Result</th>
              <th scope="col">Reason</th>
            </tr>
          </thead>
          <tbody>
            ${response.policy.rules.map(
              (r) =>
                html`<tr>
                  <th scope="row"><code>${r.rule}</code></th>
                  <td>${badge(r.passed ? 'PASS' : 'FAIL')}</td>
                  <td>${r.reason}</td>
                </tr>`,
            )}
          </tbody>
        </table>
      </section>
      <section aria-labelledby="sources-heading">
        <h2 id="sources-heading">Sources</h2>
        <div class="scroll" tabindex="0" role="region" aria-labelledby="sources-heading">
          <table>
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
            ${neighbour('Previous', data.previous, 'prev')} ${neighbour('Next', data.next, 'next')}
          </ul>
        </nav>
      </section>
      ${dispositionSection(data)} ${verifySection(receipt)}
      <section aria-labelledby="json-heading">
        <h2 id="json-heading">Raw JSON</h2>
        <details>
          <summary>The receipt as the API serves it</summary>
          <pre class="json" tabindex="0">${JSON.stringify(receipt, null, 2)}</pre>
        </details>
      </section>`,
  };
}

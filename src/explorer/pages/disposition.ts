import type { ReceiptData } from '../data.js';
import { badge, hash, receiptHref, time } from '../format.js';
import { html, type Html } from '../html.js';
import { decideByApi, decideForm } from './decide-form.js';

type Receipt = ReceiptData['response']['receipt'];
type Decision = NonNullable<Receipt['disposition']>;

const decisionText = (d: Decision) => (d.decision === 'approve' ? 'Approved' : 'Rejected');
const reviewerText = (d: Decision) =>
  html`<code>${d.reviewer.id}</code>${d.reviewer.name ? ` (${d.reviewer.name})` : ''},
    ${d.reviewer.kind === 'github_user' ? 'a GitHub user' : 'named by the recording key'}`;

/**
 * What a reviewer coming from a check run reads first, under the page's title: the human
 * decision on an escalation (who, approve or reject, when), that it still waits for one, or
 * for a disposition receipt the decision it records. Nothing for other receipts.
 */
export function decisionSummary(data: ReceiptData): Html {
  const receipt = data.response.receipt;
  const own = receipt.disposition;
  if (own)
    return html`<p class="summary" id="decision-summary">
      ${badge(own.decision === 'approve' ? 'APPROVED' : 'REJECTED')}
      <strong>${decisionText(own)} by ${reviewerText(own)}</strong>, ${time(receipt.issued_at)}: the
      human decision on escalated receipt
      <a href="${receiptHref(own.parent_receipt_id)}"
        ><code class="hash">${own.parent_receipt_id}</code></a
      >.
    </p>`;
  if (data.response.decision.verdict !== 'ESCALATED') return html``;
  const decided = data.disposition?.receipt;
  const d = decided?.disposition;
  if (!decided || !d)
    return html`<p class="summary" id="decision-summary">
      ${badge('ESCALATED')} <strong>Waiting for a human decision.</strong> Until one is recorded,
      this receipt does not let the action proceed.
    </p>`;
  return html`<p class="summary" id="decision-summary">
    ${badge(d.decision === 'approve' ? 'APPROVED' : 'REJECTED')}
    <strong>${decisionText(d)} by ${reviewerText(d)}</strong>, ${time(decided.issued_at)}:
    ${d.decision === 'approve' ? 'the escalation was approved' : 'the escalation was rejected'} —
    <a href="${receiptHref(decided.receipt_id)}">its disposition receipt</a>. The verdict below is
    the one the policy gave before the decision.
  </p>`;
}

/**
 * The receipt page's disposition section (contract §11): for an ESCALATED receipt, the human
 * decision on it or that none is recorded yet; for a disposition receipt, the escalated
 * receipt it decides. Its id (`disposition`) and place (after the chain position, before
 * verification) are fixed.
 */
export function dispositionSection(data: ReceiptData): Html {
  const receipt = data.response.receipt;
  return html`<section id="disposition" aria-labelledby="disposition-heading">
    <h2 id="disposition-heading">Disposition</h2>
    ${
      receipt.disposition
        ? decides(receipt.disposition)
        : data.disposition
          ? decidedBy(data.disposition)
          : data.response.decision.verdict === 'ESCALATED'
            ? undecided(data)
            : html`<p>Only an ESCALATED receipt takes a human decision; this one is not.</p>`
    }
  </section>`;
}

/**
 * An escalation nobody decided yet: a reviewer decides it here. For a tool call, what an
 * approval lets run (contract §12): this exact input, once, in its session.
 */
function undecided(data: ReceiptData): Html {
  const { receipt, claim } = data.response;
  const toolCall = claim.action?.tool !== undefined;
  return html`<p>No human decision is recorded for this escalation yet.</p>
    ${
      toolCall
        ? html`<p>
            Approving lets this input (the tool and the input of this digest, byte for byte) run
            once in this session, within the approval's lifetime, whatever the directory it runs in;
            the agent's next try of it is ALLOWED, naming the approval. Rejecting leaves it denied.
          </p>`
        : ''
    }
    ${decideForm(receipt.receipt_id, 'decide')}
    ${decideByApi(receipt.receipt_id, 'records that a person refused it.')}`;
}

/** A disposition receipt: what it decided, by whom, about which receipt. */
function decides(d: Decision): Html {
  return html`<p>This receipt records a human decision on an escalated receipt.</p>
    <dl class="facts">
      <dt>Decision</dt>
      <dd>${decisionText(d)}</dd>
      <dt>Reviewer</dt>
      <dd>${reviewerText(d)}</dd>
      <dt>Reason</dt>
      <dd>${d.reason}</dd>
      <dt>Escalated receipt</dt>
      <dd>
        <a href="${receiptHref(d.parent_receipt_id)}"><code>${d.parent_receipt_id}</code></a>
      </dd>
      <dt>Its receipt hash (signed here)</dt>
      <dd>${hash(d.parent_receipt_hash)}</dd>
    </dl>`;
}

/** An ESCALATED receipt that a human decided: the decision and its own receipt. */
function decidedBy(response: NonNullable<ReceiptData['disposition']>): Html {
  const disposition = response.receipt;
  const d = disposition.disposition;
  if (!d) return html`<p>The recorded disposition could not be read.</p>`;
  return html`<dl class="facts">
    <dt>Decision</dt>
    <dd>${badge(response.decision.verdict)} ${decisionText(d)}</dd>
    <dt>Reviewer</dt>
    <dd>${reviewerText(d)}</dd>
    <dt>Reason</dt>
    <dd>${d.reason}</dd>
    <dt>Decided</dt>
    <dd>${time(disposition.issued_at)}</dd>
    <dt>Disposition receipt</dt>
    <dd>
      <a href="${receiptHref(disposition.receipt_id)}"><code>${disposition.receipt_id}</code></a>
    </dd>
  </dl>`;
}

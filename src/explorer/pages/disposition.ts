import type { ReceiptData } from '../data.js';
import { badge, hash, receiptHref, time } from '../format.js';
import { html, type Html } from '../html.js';

type Receipt = ReceiptData['response']['receipt'];
type Decision = NonNullable<Receipt['disposition']>;

const decisionText = (d: Decision) => (d.decision === 'approve' ? 'Approved' : 'Rejected');
const reviewerText = (d: Decision) =>
  html`<code>${d.reviewer.id}</code>${d.reviewer.name ? ` (${d.reviewer.name})` : ''},
    ${d.reviewer.kind === 'github_user' ? 'a GitHub user' : 'named by the recording key'}`;

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
          : html`<p>
              ${
                data.response.decision.verdict === 'ESCALATED'
                  ? 'No human decision is recorded for this escalation yet.'
                  : 'Only an ESCALATED receipt takes a human decision; this one is not.'
              }
            </p>`
    }
  </section>`;
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

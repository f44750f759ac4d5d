import type { PullRequestDiff } from '../data.js';
import { badge, receiptHref, time } from '../format.js';
import { html, type Html } from '../html.js';
import type { PageView } from '../layout.js';

type Change = PullRequestDiff['changes'][number];

function changeItems(c: Change): Html[] {
  const items: Html[] = [];
  if (c.commit)
    items.push(
      html`<li>
        commit <code>${c.commit.from ?? 'none'}</code> → <code>${c.commit.to ?? 'none'}</code>
      </li>`,
    );
  if (c.verdict)
    items.push(html`<li>verdict ${badge(c.verdict.from)} → ${badge(c.verdict.to)}</li>`);
  if (c.admissibility)
    items.push(
      html`<li>admissibility ${badge(c.admissibility.from)} → ${badge(c.admissibility.to)}</li>`,
    );
  for (const r of c.rules_flipped)
    items.push(
      html`<li>
        rule <code>${r.rule}</code> ${badge(r.from ? 'PASS' : 'FAIL')} →
        ${badge(r.to ? 'PASS' : 'FAIL')}
      </li>`,
    );
  for (const id of c.sources_added) items.push(html`<li>source added: <code>${id}</code></li>`);
  for (const id of c.sources_removed) items.push(html`<li>source removed: <code>${id}</code></li>`);
  return items.length > 0 ? items : [html`<li>nothing that the receipts record</li>`];
}

/** A pull request's receipts push after push, and what changed between consecutive ones. */
export function renderPullRequest(diff: PullRequestDiff): PageView {
  const title = `Pull request #${diff.pull_request} of ${diff.repository}`;
  return {
    title,
    body: html`<h1 id="page-title">${title}</h1>
      ${
        diff.receipts.length === 0
          ? html`<p>No receipt of this pull request.</p>`
          : html`<ol class="history">
              ${diff.receipts.map((r, i) => {
                const change = i > 0 ? diff.changes[i - 1] : undefined;
                return html`<li>
                  <h2><a href="${receiptHref(r.receipt_id)}">${r.receipt_id}</a></h2>
                  <p>
                    Sequence ${r.sequence}, ${time(r.issued_at)}, commit
                    <code>${r.subject.commit ?? 'none'}</code>: ${badge(r.verdict)}
                    ${badge(r.admissibility)}
                  </p>
                  ${r.failed_rules.length > 0 ? html`<p>Failed rules: ${r.failed_rules.map((rule, j) => html`${j > 0 ? ', ' : ''}<code>${rule}</code>`)}</p>` : ''}
                  <p>${r.evidence.source_count} sources: ${r.evidence.source_types.join(', ')}</p>
                  ${
                    change
                      ? html`<h3>Changes since the previous receipt</h3>
                          <ul>
                            ${changeItems(change)}
                          </ul>`
                      : ''
                  }
                </li>`;
              })}
            </ol>`
      }`,
  };
}

import type { ReceiptData } from '../data.js';
import { badge, deploymentHref, pullRequestHref, receiptHref } from '../format.js';
import { html, type Html } from '../html.js';

/**
 * A deployment receipt's section (github/deployment-claim.ts): its environment's page, and the
 * merge receipts of the pull requests that brought the deployed commit, each with its verdict
 * and whether the deployment took it as admissible evidence. Nothing for other receipts.
 */
export function deploymentSection(data: ReceiptData): Html {
  const { receipt } = data.response;
  const s = receipt.subject;
  // A disposition carries its parent's subject: its page links the parent instead.
  if (s.action_type !== 'deployment' || receipt.disposition) return html``;
  const href = s.repository && s.environment ? deploymentHref(s.repository, s.environment) : null;
  const merges = data.mergeReceipts ?? [];
  return html`<section id="deployment" aria-labelledby="deployment-heading">
    <h2 id="deployment-heading">Deployment</h2>
    <p>
      Deploys to environment <strong>${s.environment ?? 'not named'}</strong>${
        href ? html`: <a href="${href}">every decision for this environment</a>` : ''
      }.
    </p>
    ${
      merges.length === 0
        ? html`<p>The claim names no merge receipt of a pull request.</p>`
        : html`<table class="stack merge-receipts">
            <caption>
              The merge receipts it relied on
            </caption>
            <thead>
              <tr>
                <th scope="col">Pull request</th>
                <th scope="col">Merge receipt</th>
                <th scope="col">Its outcome</th>
                <th scope="col">Evidence here</th>
              </tr>
            </thead>
            <tbody>
              ${merges.map(
                (m) =>
                  html`<tr data-source="${m.source_id}">
                    <th scope="row" data-label="Pull request">
                      ${
                        s.repository
                          ? html`<a href="${pullRequestHref(s.repository, m.pull_request)}"
                              >#${m.pull_request}</a
                            >`
                          : html`#${m.pull_request}`
                      }
                    </th>
                    <td data-label="Merge receipt">
                      ${
                        m.receipt_id
                          ? html`<a href="${receiptHref(m.receipt_id)}"
                              ><code>${m.receipt_id}</code></a
                            >`
                          : 'none'
                      }
                    </td>
                    <td data-label="Its outcome">
                      ${
                        m.receipt
                          ? html`${badge(m.receipt.verdict)} ${badge(m.receipt.admissibility)}`
                          : m.receipt_id
                            ? 'not readable here'
                            : 'not evaluated by svc'
                      }
                    </td>
                    <td data-label="Evidence here">
                      ${badge(m.admissible ? 'ADMISSIBLE' : 'INADMISSIBLE')}
                    </td>
                  </tr>`,
              )}
            </tbody>
          </table>`
    }
  </section>`;
}

import type { OverviewData } from '../data.js';
import { badge, count, DEPLOYMENTS_PATH, hash, percent } from '../format.js';
import { html, queryString } from '../html.js';
import type { PageView } from '../layout.js';
import { checkpointView } from './checkpoint.js';
import { timelineChart } from './timeline-chart.js';

const listHref = (filter: Record<string, string>) => `/explorer/receipts${queryString(filter)}`;

export function renderOverview(data: OverviewData): PageView {
  const { overview: o } = data;
  return {
    title: 'Ledger overview',
    body: html`<h1 id="page-title">Ledger overview</h1>
      <section aria-labelledby="totals-heading">
        <h2 id="totals-heading">Totals</h2>
        <dl class="tiles">
          <div>
            <dt>Receipts</dt>
            <dd>${count(o.receipts)}</dd>
          </div>
          <div>
            <dt>Acceptance rate</dt>
            <dd>${percent(o.acceptance_rate)}</dd>
          </div>
          <div>
            <dt>Agents</dt>
            <dd>${count(o.agents)}</dd>
          </div>
          <div>
            <dt>Repositories</dt>
            <dd>${count(o.repositories)}</dd>
          </div>
          <div>
            <dt>Last 24 hours</dt>
            <dd>${count(o.last_24h.receipts)}</dd>
          </div>
        </dl>
        <table>
          <caption>
            Receipts by verdict and admissibility
          </caption>
          <thead>
            <tr>
              <th scope="col">Outcome</th>
              <th scope="col">Receipts</th>
            </tr>
          </thead>
          <tbody>
            ${Object.entries(o.by_verdict).map(
              ([verdict, n]) =>
                html`<tr>
                  <th scope="row"><a href="${listHref({ verdict })}">${badge(verdict)}</a></th>
                  <td>${count(n)}</td>
                </tr>`,
            )}
            ${Object.entries(o.by_admissibility).map(
              ([status, n]) =>
                html`<tr>
                  <th scope="row"><a href="${listHref({ status })}">${badge(status)}</a></th>
                  <td>${count(n)}</td>
                </tr>`,
            )}
          </tbody>
        </table>
        <p>
          Ledger head: sequence ${count(o.head.sequence)}, receipt hash
          ${hash(o.head.receipt_hash)}.
        </p>
      </section>
      <section aria-labelledby="timeline-heading">
        <h2 id="timeline-heading">Receipts per day</h2>
        ${timelineChart(data.timeline)}
      </section>
      <section aria-labelledby="repos-heading">
        <h2 id="repos-heading">Repositories</h2>
        ${
          data.repositories.repositories.length === 0
            ? html`<p>No repository yet.</p>`
            : html`<table>
                <caption>
                  Repositories by name (first ${count(data.repositories.repositories.length)})
                </caption>
                <thead>
                  <tr>
                    <th scope="col">Repository</th>
                    <th scope="col">Receipts</th>
                    <th scope="col">Acceptance rate</th>
                  </tr>
                </thead>
                <tbody>
                  ${data.repositories.repositories.map(
                    (r) =>
                      html`<tr>
                        <th scope="row">
                          <a href="${listHref({ repo: r.repository })}">${r.repository}</a>
                        </th>
                        <td>${count(r.total)}</td>
                        <td>${percent(r.acceptance_rate)}</td>
                      </tr>`,
                  )}
                </tbody>
              </table>`
        }
      </section>
      <section aria-labelledby="deployments-heading">
        <h2 id="deployments-heading">Deployments</h2>
        <p>
          <a href="${DEPLOYMENTS_PATH}">Environments deployed to</a>: each environment’s decisions,
          and the escalated deployments waiting for a reviewer.
        </p>
      </section>
      <section aria-labelledby="agents-heading">
        <h2 id="agents-heading">Agents</h2>
        ${
          data.agents.agents.length === 0
            ? html`<p>No agent yet.</p>`
            : html`<table>
                <caption>
                  Agents by name (first ${count(data.agents.agents.length)})
                </caption>
                <thead>
                  <tr>
                    <th scope="col">Agent</th>
                    <th scope="col">Receipts</th>
                    <th scope="col">Acceptance rate</th>
                    <th scope="col">Models</th>
                  </tr>
                </thead>
                <tbody>
                  ${data.agents.agents.map(
                    (a) =>
                      html`<tr>
                        <th scope="row">
                          <a href="${listHref({ agent: a.agent })}">${a.agent}</a>
                        </th>
                        <td>${count(a.total)}</td>
                        <td>${percent(a.acceptance_rate)}</td>
                        <td>${a.models.join(', ')}</td>
                      </tr>`,
                  )}
                </tbody>
              </table>`
        }
      </section>
      <section aria-labelledby="checkpoint-heading">
        <h2 id="checkpoint-heading">Latest checkpoint</h2>
        ${checkpointView(data.checkpoint)}
        <p><a href="/explorer/keys">Signing keys, checkpoints and witnesses</a></p>
      </section>`,
  };
}

import type { KeysData } from '../data.js';
import { hash } from '../format.js';
import { html } from '../html.js';
import type { PageView } from '../layout.js';
import { checkpointView } from './checkpoint.js';

const STATUS: Record<string, string> = { current: 'PASS', retired: 'SKIPPED', revoked: 'FAIL' };

/** The signing-key history, the latest checkpoint and the configured witnesses. */
export function renderKeys(data: KeysData): PageView {
  const keys = data.history.keys;
  return {
    title: 'Keys and log',
    body: html`<h1 id="page-title">Keys and log</h1>
      <section aria-labelledby="keys-heading">
        <h2 id="keys-heading">Signing keys</h2>
        <p>
          Log origin <code>${data.history.origin}</code>. Each key signed the receipts of its
          sequences; each later key was introduced by a transition statement signed by the key
          before it.
        </p>
        ${
          keys.length === 0
            ? html`<p>
                This ledger publishes no key history yet: its server key (<a href="/v1/keys/server"
                  >GET /v1/keys/server</a
                >) signs every receipt.
              </p>`
            : html`<div class="scroll" tabindex="0" role="region" aria-labelledby="keys-heading">
                <table class="stack">
                  <caption>
                    Key history, oldest first
                  </caption>
                  <thead>
                    <tr>
                      <th scope="col">Key fingerprint</th>
                      <th scope="col">Status</th>
                      <th scope="col">Sequences</th>
                      <th scope="col">Revoked from</th>
                      <th scope="col">Introduced by</th>
                    </tr>
                  </thead>
                  <tbody>
                    ${keys.map(
                      (k) =>
                        html`<tr>
                          <th scope="row" data-label="Key">${hash(k.key_id)}</th>
                          <td data-label="Status">
                            <span
                              class="badge ${STATUS[k.status] === 'PASS' ? 'good' : STATUS[k.status] === 'FAIL' ? 'bad' : 'neutral'}"
                              >${k.status}</span
                            >
                          </td>
                          <td data-label="Sequences">
                            ${k.first_sequence} to ${k.last_sequence ?? 'now'}
                          </td>
                          <td data-label="Revoked from">${k.revoked_from_sequence ?? '—'}</td>
                          <td data-label="Introduced by">
                            ${k.transition ? html`transition signed by ${hash(k.transition.statement.previous_key_id)}` : 'no transition (first key)'}
                          </td>
                        </tr>`,
                    )}
                  </tbody>
                </table>
              </div>`
        }
        <p>As JSON: <a href="/v1/keys">GET /v1/keys</a>.</p>
      </section>
      <section aria-labelledby="checkpoint-heading">
        <h2 id="checkpoint-heading">Latest checkpoint</h2>
        ${checkpointView(data.checkpoint)}
        <p>As a signed note: <a href="/v1/log/checkpoint">GET /v1/log/checkpoint</a>.</p>
      </section>
      <section aria-labelledby="witnesses-heading">
        <h2 id="witnesses-heading">Witnesses</h2>
        ${
          data.witnesses.length === 0
            ? html`<p>No witness is configured: checkpoints carry the log’s signature only.</p>`
            : html`<ul>
                ${data.witnesses.map((w) => html`<li><code>${w.name}</code>: verifier key ${hash(w.verifierKey)}</li>`)}
              </ul>`
        }
      </section> `,
  };
}

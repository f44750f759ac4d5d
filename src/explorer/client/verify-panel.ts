import { badge } from '../format.js';
import { html, type Html } from '../html.js';
import { verifyInBrowser, type BrowserVerification } from './verify-in-browser.js';

function resultView(v: BrowserVerification): Html {
  const { result, decision } = v;
  return html`<div
    class="result ${result.valid ? 'valid' : 'invalid'}"
    id="verify-outcome"
    data-valid="${String(result.valid)}"
  >
    <p>
      <strong>${result.valid ? 'Valid: every check passed' : 'Not valid: a check failed'}</strong>
      ${badge(result.valid ? 'PASS' : 'FAIL')}
    </p>
    <p>Checked against key <code class="hash">${v.key.keyId}</code>: ${v.trust}.</p>
    <p>${decision.proceed ? 'Go ahead' : 'Do not go ahead'}: ${decision.reason}.</p>
    ${
      v.witnesses
        ? html`<p id="verify-quorum" data-met="${String(v.witnesses.ok)}">
            Witnesses: ${v.witnesses.ok ? 'quorum met' : 'quorum NOT met'}
            ${badge(v.witnesses.ok ? 'PASS' : 'FAIL')} (${v.witnesses.reason}).
          </p>`
        : ''
    }
    <table>
      <caption>
        Each check, as svc-verify reports it
      </caption>
      <thead>
        <tr>
          <th scope="col">Check</th>
          <th scope="col">Layer</th>
          <th scope="col">Status</th>
          <th scope="col">Detail</th>
        </tr>
      </thead>
      <tbody>
        ${result.checks.map(
          (c) =>
            html`<tr data-check="${c.name}">
              <th scope="row"><code>${c.name}</code></th>
              <td>${c.layer}</td>
              <td>${badge(c.status)}</td>
              <td>${c.detail ?? ''}</td>
            </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}

const problemView = (message: string) =>
  html`<div class="result invalid" id="verify-outcome" data-valid="false">
    <p><strong>Not verified:</strong> ${message}</p>
  </div>`;

/** Shows the verify form of a receipt page and checks the receipt when it is submitted. */
export function setUpVerifyPanel(root: ParentNode): void {
  const form = root.querySelector<HTMLFormElement>('#verify-form');
  const out = root.querySelector<HTMLElement>('#verify-result');
  if (!form || !out) return;
  form.hidden = false;
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const button = form.querySelector<HTMLButtonElement>('button[type="submit"]');
    if (button) button.disabled = true;
    out.innerHTML = html`<p>Verifying…</p>`.text;
    verifyInBrowser({
      receiptText: String(data.get('receipt') ?? ''),
      mode: data.get('trust') === 'history' ? 'history' : 'pin',
      fingerprint: String(data.get('fingerprint') ?? ''),
      checkpointText: String(data.get('checkpoint') ?? ''),
      policyText: String(data.get('policy') ?? ''),
    })
      .then(
        (v) => (out.innerHTML = resultView(v).text),
        (error: unknown) =>
          (out.innerHTML = problemView(
            error instanceof Error ? error.message : String(error),
          ).text),
      )
      .finally(() => {
        if (button) button.disabled = false;
      });
  });
}

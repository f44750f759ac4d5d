import { html, type Html } from '../html.js';

/**
 * The receipt's portable files (contract §14): the receipt itself, its C2SP tlog-proof, and its
 * in-toto attestation, each saved under the name its tools expect. With private reads the page's
 * script fetches them with the reader's key (`data-keyed-download`).
 */
export function downloadsSection(receiptId: string): Html {
  const id = encodeURIComponent(receiptId);
  const files: [string, string, string][] = [
    [`/v1/receipts/${id}`, `${receiptId}.response.json`, 'the receipt with its claim (JSON)'],
    [
      `/v1/receipts/${id}/proof?format=tlog-proof`,
      `${receiptId}.tlog-proof`,
      'its inclusion proof as a C2SP tlog-proof, for svc-verify --proof',
    ],
    [
      `/v1/receipts/${id}/attestation`,
      `${receiptId}.dsse.json`,
      'its in-toto attestation (a DSSE envelope), for svc-verify attestation',
    ],
  ];
  return html`<section aria-labelledby="downloads-heading">
    <h2 id="downloads-heading">Download</h2>
    <ul class="downloads">
      ${files.map(
        ([href, name, what]) =>
          html`<li>
            <a href="${href}" download="${name}" data-keyed-download>${name}</a>: ${what}
          </li>`,
      )}
    </ul>
  </section>`;
}

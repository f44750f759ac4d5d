import type { ReceiptData } from '../data.js';
import { html, type Html } from '../html.js';

/**
 * The receipt page's disposition section: what a reviewer decided about the receipt after it
 * was issued. Reserved: the ledger records no dispositions yet, so the section says so. Its
 * id (`disposition`) and place (after the chain position, before verification) are fixed.
 */
export function dispositionSection(_data: ReceiptData): Html {
  return html`<section id="disposition" aria-labelledby="disposition-heading">
    <h2 id="disposition-heading">Disposition</h2>
    <p>No disposition is recorded for this receipt.</p>
  </section>`;
}

import { parseCheckpointText, parseNote, rootHex } from '@svc/verify';
import { count, hash } from '../format.js';
import { html, type Html } from '../html.js';

/** A served checkpoint (signed note): origin, size, root and who signed it; the note itself. */
export function checkpointView(note: string | null): Html {
  if (note === null) return html`<p>No checkpoint could be read.</p>`;
  const parsed = parseNote(note);
  const checkpoint = parsed ? parseCheckpointText(parsed.text) : null;
  if (!parsed || !checkpoint) return html`<p>The served checkpoint could not be parsed.</p>`;
  return html`<dl class="facts">
      <dt>Origin</dt>
      <dd><code>${checkpoint.origin}</code></dd>
      <dt>Tree size</dt>
      <dd>${count(checkpoint.size)} receipts</dd>
      <dt>Root hash (base64, as in the signed note)</dt>
      <dd>${hash(note.split('\n')[2] ?? '')}</dd>
      <dt>Root hash (hex, as svc-verify ledger prints it)</dt>
      <dd>${hash(rootHex(checkpoint.root))}</dd>
      <dt>Signatures</dt>
      <dd>
        <ul>
          ${parsed.signatures.map((s) => html`<li><code>${s.name}</code></li>`)}
        </ul>
      </dd>
    </dl>
    <details>
      <summary>The signed note</summary>
      <pre class="note">${note}</pre>
    </details>`;
}

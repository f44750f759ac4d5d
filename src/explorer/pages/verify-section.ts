import type { Receipt } from '../../core/receipt.js';
import { html, type Html } from '../html.js';

/**
 * The "Verify in this browser" form. Hidden until the page's script runs (it needs one): the
 * script checks the receipt in the text area with the verifier svc-verify uses.
 */
export function verifySection(receipt: Receipt): Html {
  const keyId = receipt.attestations[0]?.key_id ?? '';
  return html`<section id="verify" aria-labelledby="verify-heading">
    <h2 id="verify-heading">Verify in this browser</h2>
    <noscript
      ><p class="notice">
        Checking the receipt in the browser needs JavaScript. Without it:
        <code>svc-verify receipt.json --fingerprint &lt;key&gt; --key-url &lt;this service&gt;</code
        >.
      </p></noscript
    >
    <form id="verify-form" class="verify-form" data-receipt-id="${receipt.receipt_id}" hidden>
      <p>
        The signature, the hashes, the chain linkage and the inclusion proof are checked here, by
        the code <code>svc-verify</code> runs, against a key you trust. Edit the receipt below to
        see a tampered one fail.
      </p>
      <fieldset>
        <legend>Trusted key</legend>
        <div class="choice">
          <input type="radio" id="trust-pin" name="trust" value="pin" checked />
          <label for="trust-pin">The key whose fingerprint I pin</label>
        </div>
        <div class="field">
          <label for="fingerprint">Key fingerprint (sha256:…)</label>
          <input
            id="fingerprint"
            name="fingerprint"
            type="text"
            spellcheck="false"
            autocomplete="off"
            value=""
            placeholder="${keyId}"
            aria-describedby="fingerprint-hint"
          />
          <small id="fingerprint-hint"
            >Obtained through a channel you trust; the receipt names <code>${keyId}</code>.</small
          >
        </div>
        <div class="choice">
          <input type="radio" id="trust-history" name="trust" value="history" />
          <label for="trust-history"
            >The key history this service publishes (<code>GET /v1/keys</code>)</label
          >
        </div>
      </fieldset>
      <div class="field">
        <label for="receipt-json">Receipt (JSON)</label>
        <textarea id="receipt-json" name="receipt" rows="14" spellcheck="false">
${JSON.stringify(receipt, null, 2)}</textarea>
      </div>
      <div class="field">
        <label for="trusted-checkpoint">A checkpoint you trust (optional)</label>
        <textarea
          id="trusted-checkpoint"
          name="checkpoint"
          rows="4"
          spellcheck="false"
          aria-describedby="checkpoint-hint"
        ></textarea>
        <small id="checkpoint-hint"
          >A signed checkpoint kept by you or a witness: the inclusion proof must then be of that
          tree.</small
        >
      </div>
      <div class="field">
        <label for="witness-policy">A C2SP tlog-policy (optional)</label>
        <textarea
          id="witness-policy"
          name="policy"
          rows="4"
          spellcheck="false"
          aria-describedby="policy-hint"
        ></textarea>
        <small id="policy-hint"
          >The log and witness keys you trust (<code>svc-verify policy init</code> writes one): the
          proof's checkpoint must then be cosigned by its quorum of witnesses.</small
        >
      </div>
      <div class="actions"><button type="submit">Verify in this browser</button></div>
    </form>
    <div id="verify-result" role="status" aria-live="polite"></div>
  </section>`;
}

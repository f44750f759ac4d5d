import { html, type Html } from '../html.js';

// Deciding an escalation in the explorer (contract §11): the form the page's script shows
// (client/decide-panel.ts posts it with the reviewer key kept in the tab) and, for a reader
// without the script, the API call that does the same.

/** The Approve / Reject form of one escalated receipt; `id` keeps its labels apart on a page. */
export function decideForm(receiptId: string, id: string): Html {
  return html`<form class="decide-form key-form" data-receipt-id="${receiptId}" hidden>
    <p class="decide-key">
      <label for="${id}-key">Reviewer API key</label>
      <input id="${id}-key" name="api-key" type="password" autocomplete="off" spellcheck="false" />
    </p>
    <p>
      <label for="${id}-reviewer">Your reviewer id</label>
      <input id="${id}-reviewer" name="reviewer" required maxlength="256" />
    </p>
    <p>
      <label for="${id}-reason">Reason</label>
      <input id="${id}-reason" name="reason" required maxlength="4096" />
    </p>
    <p>
      <button type="submit" name="decision" value="approve">Approve</button>
      <button type="submit" name="decision" value="reject" class="secondary">Reject</button>
    </p>
    <p class="decide-status" role="status"></p>
  </form>`;
}

/** The API call that decides an escalation; `rejects` ends the note on what a reject does. */
export function decideByApi(receiptId: string, rejects: string): Html {
  const curl = `curl -sS -X POST "$SVC_URL/v1/receipts/${encodeURIComponent(receiptId)}/disposition" \\
  -H "X-API-Key: $SVC_REVIEWER_KEY" -H 'Content-Type: application/json' \\
  -d '{"decision": "approve", "reviewer": {"id": "your-login"}, "reason": "why"}'`;
  return html`<details>
    <summary>Decide with the API</summary>
    <pre class="json" tabindex="0">${curl}</pre>
    <p>The key needs the reviewer capability; <code>"decision": "reject"</code> ${rejects}</p>
  </details>`;
}

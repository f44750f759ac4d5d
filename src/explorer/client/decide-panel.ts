import type { ReceiptResponse } from '../data.js';
import { badge, receiptHref } from '../format.js';
import { html } from '../html.js';
import { ApiError, forgetKey, postJson, storedKey, storeKey } from './api.js';

type Decision = 'approve' | 'reject';

/** What the page shows once the API recorded the decision: the decision and its receipt. */
const verdictOf = (decision: Decision) => (decision === 'approve' ? 'APPROVED' : 'REJECTED');

function decidedView(decision: Decision, response: ReceiptResponse) {
  return html`${badge(verdictOf(decision))}
    <strong>${decision === 'approve' ? 'Approved' : 'Rejected'}</strong>: recorded as
    <a href="${receiptHref(response.receipt.receipt_id)}"
      ><code>${response.receipt.receipt_id}</code></a
    >.`;
}

/**
 * The Approve and Reject forms of an environment's waiting deployments: each posts the
 * disposition (POST /v1/receipts/:id/disposition) with the key kept in this tab, asking for
 * one when none is kept, and shows the API's answer, its decision or its refusal.
 */
export function setUpDecidePanel(root: ParentNode): void {
  for (const form of root.querySelectorAll<HTMLFormElement>('form.decide-form')) {
    const receiptId = form.dataset.receiptId ?? '';
    const keyField = form.querySelector<HTMLElement>('.decide-key');
    const keyInput = keyField?.querySelector<HTMLInputElement>('input');
    const status = form.querySelector<HTMLElement>('.decide-status');
    const buttons = [...form.querySelectorAll<HTMLButtonElement>('button')];
    const askForKey = (ask: boolean) => {
      if (keyField) keyField.hidden = !ask;
      if (keyInput) keyInput.required = ask;
    };
    askForKey(!storedKey());
    form.hidden = false;
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const submitter = (event as SubmitEvent).submitter as HTMLButtonElement | null;
      const decision: Decision = submitter?.value === 'reject' ? 'reject' : 'approve';
      const typed = keyInput?.value.trim() ?? '';
      if (typed) storeKey(typed);
      if (!storedKey()) {
        askForKey(true);
        if (status) status.textContent = 'Enter an API key with the reviewer capability.';
        return;
      }
      const data = new FormData(form);
      for (const b of buttons) b.disabled = true;
      if (status) status.textContent = 'Recording the decision…';
      postJson<ReceiptResponse>(`/v1/receipts/${encodeURIComponent(receiptId)}/disposition`, {
        decision,
        reviewer: { id: String(data.get('reviewer') ?? '').trim() },
        reason: String(data.get('reason') ?? ''),
      }).then(
        (response) => {
          const view = decidedView(decision, response);
          if (status) status.innerHTML = view.text;
          form.dataset.decided = decision;
          for (const input of form.querySelectorAll('input')) input.disabled = true;
          askForKey(false);
          // The decisions table's row of this receipt shows the decision too.
          const cell = document.querySelector(
            `tr[data-receipt-id="${CSS.escape(receiptId)}"] td[data-label="Verdict"]`,
          );
          cell?.insertAdjacentHTML('beforeend', ` ${badge(verdictOf(decision)).text}`);
        },
        (error: unknown) => {
          for (const b of buttons) b.disabled = false;
          if (error instanceof ApiError) {
            // A refused key is forgotten; a key that may not decide can be replaced here.
            if (error.status === 401) forgetKey();
            if (error.status === 401 || error.code === 'forbidden') askForKey(true);
            if (status)
              status.textContent = `${error.message} (${error.code ?? `HTTP ${error.status}`})`;
          } else if (status) status.textContent = `The decision was not sent: ${String(error)}`;
        },
      );
    });
  }
}

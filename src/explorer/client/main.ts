import { setUpPrivateReads } from './private-reads.js';
import { setUpDecidePanel } from './decide-panel.js';
import { setUpVerifyPanel } from './verify-panel.js';

// The explorer's one script (no inline script: the service's CSP holds). Pages work without
// it; it adds verification in the browser, and draws the pages of a private ledger.
const body = document.body;
const page = body.dataset.page ?? '';
if (body.dataset.reads === 'private' && page !== 'keys') setUpPrivateReads(page);
else {
  setUpVerifyPanel(document);
  setUpDecidePanel(document);
}

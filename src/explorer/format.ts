import { html, type Html } from './html.js';

const VERDICT_CLASS: Record<string, string> = {
  ALLOWED: 'good',
  ACCEPTED: 'good',
  APPROVED: 'good',
  BLOCKED: 'bad',
  REJECTED: 'bad',
  ESCALATED: 'warn',
  NON_DETERMINISTIC: 'warn',
  PASS: 'good',
  FAIL: 'bad',
  UNVERIFIED: 'warn',
  SKIPPED: 'neutral',
  ADMISSIBLE: 'good',
  INADMISSIBLE: 'bad',
};

/** A verdict, admissibility or check status as a badge; unknown values as neutral text. */
export const badge = (value: string): Html =>
  html`<span class="badge ${VERDICT_CLASS[value] ?? 'neutral'}">${value}</span>`;

export const percent = (rate: number): string => `${(rate * 100).toFixed(1)} %`;

export const count = (n: number): string => n.toLocaleString('en-US');

/** A long hash shown whole in a code element that may wrap. */
export const hash = (value: string | null | undefined): Html =>
  value ? html`<code class="hash">${value}</code>` : html`<span>none</span>`;

/** A UTC time as text, in a time element. */
export const time = (iso: string): Html =>
  html`<time datetime="${iso}">${iso.replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC')}</time>`;

export const receiptHref = (receiptId: string): string =>
  `/explorer/receipts/${encodeURIComponent(receiptId)}`;

/** The page of an agent session (contract §12). */
export const sessionHref = (sessionId: string): string =>
  `/explorer/sessions/${encodeURIComponent(sessionId)}`;

export const pullRequestHref = (repository: string, pr: string | number): string =>
  `/explorer/pulls?${new URLSearchParams({ repository, pr: String(pr) }).toString()}`;

/** The environments deployment receipts name. */
export const DEPLOYMENTS_PATH = '/explorer/deployments';

/**
 * The page of one repository's environment: `/explorer/deployments/:owner/:repo/:environment`,
 * each part encoded (names are the submitter's), or null for a repository that is not
 * owner/name (a claim submitted by key may name anything): such a page has no route.
 */
export function deploymentHref(repository: string, environment: string): string | null {
  const slash = repository.indexOf('/');
  if (slash <= 0 || slash === repository.length - 1 || !environment) return null;
  const parts = [repository.slice(0, slash), repository.slice(slash + 1), environment];
  return `${DEPLOYMENTS_PATH}/${parts.map(encodeURIComponent).join('/')}`;
}

/**
 * The workflow run a deployment receipt of the GitHub App answers: its claim_id names it
 * (`gh:<repo>:deployment-<id>@run-<run>:<digest>`, github/deployment-claim.ts), and the
 * explorer may not import the App's code. Null for any other claim_id.
 */
export function deploymentRunOf(claimId: string): number | null {
  const match = /^gh:[^:]+:deployment-\d+@run-(\d{1,15}):[0-9a-f]+$/.exec(claimId);
  return match ? Number(match[1]) : null;
}

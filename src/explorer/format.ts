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

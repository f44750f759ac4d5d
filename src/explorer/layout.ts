import { DEPLOYMENTS_PATH } from './format.js';
import { html, type Html } from './html.js';

export type PageName =
  'overview' | 'receipts' | 'receipt' | 'pull' | 'keys' | 'session' | 'deployments' | 'deployment';

export const SCRIPT_PATH = '/explorer/assets/explorer.js';
export const STYLE_PATH = '/explorer/assets/explorer.css';

const NAV: { page: PageName; href: string; label: string }[] = [
  { page: 'overview', href: '/explorer', label: 'Overview' },
  { page: 'receipts', href: '/explorer/receipts', label: 'Receipts' },
  { page: 'deployments', href: DEPLOYMENTS_PATH, label: 'Deployments' },
  { page: 'keys', href: '/explorer/keys', label: 'Keys and log' },
];

/** What a page renders: its title (also the h1) and its main content. */
export interface PageView {
  title: string;
  body: Html;
}

export interface PageFrame {
  page: PageName;
  /** Private reads: the page is a shell that the browser fills with the reader's key. */
  private: boolean;
}

/**
 * The document around a page: landmarks (banner, navigation, main, contentinfo), a skip link,
 * the stylesheet and the one script, both files of this service (no inline script or style,
 * so the service's Content-Security-Policy holds).
 */
export function layout(frame: PageFrame, view: PageView): Html {
  const current =
    frame.page === 'receipt'
      ? 'receipts'
      : frame.page === 'deployment'
        ? 'deployments'
        : frame.page;
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="no-referrer" />
        <title>${view.title} · svc ledger explorer</title>
        <link rel="stylesheet" href="${STYLE_PATH}" />
        <link rel="icon" href="data:," />
        <script type="module" src="${SCRIPT_PATH}"></script>
      </head>
      <body data-page="${frame.page}" data-reads="${frame.private ? 'private' : 'public'}">
        <a class="skip" href="#main">Skip to the content</a>
        <header class="site">
          <p class="brand"><a href="/explorer">svc ledger explorer</a></p>
          <nav aria-label="Explorer">
            <ul>
              ${NAV.map(
                (item) =>
                  html`<li>
                    <a
                      href="${item.href}"
                      ${item.page === current ? html` aria-current="page"` : ''}
                      >${item.label}</a
                    >
                  </li>`,
              )}
              <li><a href="/docs">API</a></li>
            </ul>
          </nav>
        </header>
        <main id="main" tabindex="-1">${view.body}</main>
        <footer class="site">
          <p>
            Every receipt is signed with Ed25519 and chained by hash; check one on its page with
            <strong>Verify in this browser</strong>, or offline with <code>svc-verify</code>.
          </p>
        </footer>
      </body>
    </html> `;
}

/**
 * The page a private ledger serves: a heading and the key form. The page's script keeps the
 * key in this tab's sessionStorage, reads the JSON API with it and draws the page here.
 */
export function privateShell(title: string): PageView {
  return {
    title,
    body: html`<h1 id="page-title">${title}</h1>
      <section id="key-prompt" aria-labelledby="key-heading">
        <h2 id="key-heading">Your API key</h2>
        <p>
          Reads of this ledger are private: the explorer shows what your API key may read. The key
          stays in this browser tab (sessionStorage) and is sent only as a header to this service’s
          API.
        </p>
        <form id="key-form" class="key-form">
          <label for="api-key">API key</label>
          <input
            id="api-key"
            name="api-key"
            type="password"
            autocomplete="off"
            spellcheck="false"
            required
          />
          <button type="submit">Show the ledger</button>
        </form>
        <noscript
          ><p class="notice">
            With private reads the explorer needs JavaScript: it sends your key from this page,
            never in a link.
          </p></noscript
        >
        <p id="key-status" role="status"></p>
      </section>
      <div id="private-content"></div>`,
  };
}

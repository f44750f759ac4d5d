// Server-side and in-browser rendering of the explorer's pages. Receipts carry strings chosen
// by whoever submitted the claim (claim text, source contents, agent names, URIs): every
// interpolated value is escaped unless it is itself markup built by this module.

/** Markup that is safe to insert: built only by `html` (escaping) or `raw` (trusted text). */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
};

export const escapeText = (value: string): string => value.replace(/[&<>"'`]/g, (c) => ESCAPES[c]!);

/** A value as markup: Html as it is, arrays joined, null/undefined/false as nothing. */
function render(value: unknown): string {
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === null || value === undefined || value === false) return '';
  return escapeText(String(value));
}

/** A template whose interpolations are escaped, except Html built here. */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1]!;
  return new Html(out);
}

/** Markup written by this program (never data): inserted as it is. */
export const raw = (text: string): Html => new Html(text);

/**
 * A URL for an href: only http(s) and relative ones; anything else (javascript:, data:) is
 * shown as text, never linked. Returns null for a URL that must not be a link.
 */
export function safeHref(url: string): string | null {
  if (url.startsWith('/') && !url.startsWith('//')) return url;
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? parsed.href : null;
  } catch {
    return null;
  }
}

/** A link to an attacker-chosen URL (rel noopener, no referrer), or the text when not http(s). */
export const externalLink = (url: string, text: string = url): Html => {
  const href = safeHref(url);
  return href
    ? html`<a href="${href}" rel="noopener noreferrer nofollow">${text}</a>`
    : html`<span>${text}</span>`;
};

/** A query string from members, leaving out empty ones. */
export function queryString(params: {
  [name: string]: string | number | undefined | null;
}): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params))
    if (value !== undefined && value !== null && value !== '') search.set(name, String(value));
  const text = search.toString();
  return text ? `?${text}` : '';
}

import type { ClaimInput } from '../../core/claim-schema.js';
import { hash, sessionHref } from '../format.js';
import { html, type Html } from '../html.js';

/**
 * What a tool-call claim would run (contract §12), for the reviewer who approves or rejects it:
 * the tool, the redacted summary the rules read, the input's digest (an approval lets exactly
 * this input run, once) and the session. Empty for any other claim.
 */
export function toolCallSection(claim: ClaimInput): Html {
  const action = claim.action;
  const tool = action?.tool;
  if (!action || !tool) return html``;
  const s = tool.summary;
  const list = (items: readonly string[] | undefined) =>
    items?.length ? html`${items.map((v, i) => html`${i ? ', ' : ''}<code>${v}</code>`)}` : null;
  const rows: [string, Html | string | null][] = [
    ['Tool', html`<code>${tool.name}</code> (${tool.harness})`],
    ['Command', s.command ? html`<code class="content">${s.command}</code>` : null],
    ['Paths', list(s.paths)],
    ['URLs', list(s.urls)],
    ['MCP', s.mcp_server ? html`<code>${s.mcp_server}/${s.mcp_tool ?? ''}</code>` : null],
    ['Input digest', hash(tool.input_digest)],
    [
      'Session',
      action.session
        ? html`<a href="${sessionHref(action.session.id)}">${action.session.id}</a
            >${action.session.cwd ? html` in <code>${action.session.cwd}</code>` : ''}`
        : null,
    ],
    ['Agent', action.agent ?? null],
  ];
  return html`<section aria-labelledby="tool-call-heading">
    <h2 id="tool-call-heading">Tool call</h2>
    <dl class="facts">
      ${rows
        .filter(([, value]) => value !== null)
        .map(
          ([label, value]) =>
            html`<dt>${label}</dt>
              <dd>${value}</dd>`,
        )}
    </dl>
    ${
      s.incomplete
        ? html`<p>The summary could not be read whole: every tool-call rule applied to it.</p>`
        : ''
    }
    <p>
      What is shown is the redacted summary the rules read; an approval lets exactly the input of
      this digest run, once, in this session.
    </p>
  </section>`;
}

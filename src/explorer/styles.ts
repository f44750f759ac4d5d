// The explorer's stylesheet, served as a file (/explorer/assets/explorer.css): the pages carry
// no inline style. Colours keep a contrast of at least 4.5:1 (WCAG AA) on their backgrounds.
export const EXPLORER_CSS = `:root { color-scheme: light; --fg: #1b1f24; --muted: #4a5361; --bg: #ffffff; --line: #c9d1d9; --link: #0a53be; --good: #116329; --good-bg: #dafbe1; --bad: #a40e26; --bad-bg: #ffebe9; --warn: #7d4e00; --warn-bg: #fff8c5; --neutral: #3d444d; --neutral-bg: #eaeef2; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); }
a { color: var(--link); }
a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible, textarea:focus-visible, summary:focus-visible, [tabindex]:focus-visible { outline: 3px solid #0a53be; outline-offset: 2px; }
.skip { position: absolute; left: -999px; top: 0; background: #fff; padding: .5rem 1rem; }
.skip:focus { left: 1rem; z-index: 10; }
header.site { display: flex; flex-wrap: wrap; align-items: center; gap: 1rem 2rem; padding: .75rem 1.5rem; border-bottom: 1px solid var(--line); }
header.site .brand { margin: 0; font-weight: 700; }
header.site .brand a { color: var(--fg); text-decoration: none; }
header.site nav ul { display: flex; flex-wrap: wrap; gap: 1rem; list-style: none; margin: 0; padding: 0; }
header.site nav a[aria-current="page"] { font-weight: 700; color: var(--fg); }
main { max-width: 72rem; margin: 0 auto; padding: 1rem 1.5rem 3rem; }
main:focus { outline: none; }
footer.site { border-top: 1px solid var(--line); padding: 1rem 1.5rem; color: var(--muted); font-size: .9rem; }
h1 { font-size: 1.6rem; overflow-wrap: anywhere; }
h2 { font-size: 1.25rem; margin-top: 2rem; overflow-wrap: anywhere; }
table { border-collapse: collapse; width: 100%; margin: .5rem 0 1rem; }
caption { text-align: left; color: var(--muted); padding: .25rem 0; }
th, td { text-align: left; vertical-align: top; border-bottom: 1px solid var(--line); padding: .35rem .5rem; overflow-wrap: anywhere; }
thead th { border-bottom: 2px solid var(--fg); }
.scroll { overflow-x: auto; }
code, pre, textarea { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .9em; }
code { overflow-wrap: anywhere; }
/* A session's sequence, time and record kind break between words only: never "1 0" or "Decisi on". */
table.session-records td:nth-child(-n+3), table.session-records th { overflow-wrap: normal; }
code.hash { word-break: break-all; }
ul.downloads li { overflow-wrap: anywhere; word-break: break-all; }
pre { background: #f6f8fa; border: 1px solid var(--line); padding: .75rem; overflow: auto; max-height: 32rem; white-space: pre-wrap; overflow-wrap: anywhere; }
.content { white-space: pre-wrap; }
.badge { display: inline-block; white-space: nowrap; padding: 0 .45rem; border-radius: .3rem; font-size: .85rem; font-weight: 600; border: 1px solid currentColor; }
.badge.good { color: var(--good); background: var(--good-bg); }
.badge.bad { color: var(--bad); background: var(--bad-bg); }
.badge.warn { color: var(--warn); background: var(--warn-bg); }
.badge.neutral { color: var(--neutral); background: var(--neutral-bg); }
dl.facts { display: grid; grid-template-columns: minmax(9rem, max-content) 1fr; gap: .25rem 1rem; }
dl.facts dt { font-weight: 600; }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
dl.facts ul { margin: 0; padding-left: 1.2rem; }
dl.tiles { display: flex; flex-wrap: wrap; gap: 1rem; padding: 0; }
dl.tiles div { border: 1px solid var(--line); border-radius: .4rem; padding: .5rem 1rem; min-width: 9rem; }
dl.tiles dt { color: var(--muted); font-size: .9rem; }
dl.tiles dd { margin: 0; font-size: 1.5rem; font-weight: 700; }
form.filters { display: flex; flex-wrap: wrap; gap: .75rem 1rem; align-items: flex-start; }
form.filters .actions { align-self: flex-end; margin-bottom: .5rem; }
.field { display: flex; flex-direction: column; gap: .2rem; margin-bottom: .5rem; }
.field small { color: var(--muted); max-width: 22rem; }
input, select, textarea, button { font: inherit; color: var(--fg); }
input, select, textarea { border: 1px solid #6e7781; border-radius: .3rem; padding: .3rem .45rem; background: #fff; }
textarea { width: 100%; }
button { background: #0a53be; color: #fff; border: 0; border-radius: .3rem; padding: .4rem 1rem; cursor: pointer; }
button.secondary { background: var(--neutral-bg); color: var(--fg); border: 1px solid #6e7781; }
fieldset { border: 1px solid var(--line); border-radius: .4rem; margin: .5rem 0 1rem; min-width: 0; }
.verify-form input[type="text"] { width: 100%; max-width: 48rem; }
.choice { display: flex; gap: .4rem; align-items: center; margin: .25rem 0; }
.pager { display: flex; gap: 1.5rem; list-style: none; padding: 0; }
.notice { border-left: 4px solid var(--warn); background: var(--warn-bg); padding: .5rem .75rem; }
.result { border: 2px solid var(--line); border-radius: .4rem; padding: .5rem 1rem; margin-top: 1rem; }
.result.valid { border-color: var(--good); }
.result.invalid { border-color: var(--bad); }
ol.history > li { margin-bottom: 1.5rem; }
figure.chart { margin: 0; }
figure.chart svg { width: 100%; max-width: 48rem; height: auto; }
.bar.allowed, .swatch.allowed { fill: #1a7f37; background: #1a7f37; }
.bar.blocked, .swatch.blocked { fill: #cf222e; background: #cf222e; }
.bar.escalated, .swatch.escalated { fill: #9a6700; background: #9a6700; }
.axis { stroke: var(--muted); }
.axis-label { fill: var(--muted); font-size: 12px; }
.legend { display: flex; gap: 1rem; list-style: none; padding: 0; }
.summary { border-left: 4px solid var(--line); padding: .5rem .75rem; background: #f6f8fa; overflow-wrap: anywhere; }
tr.cause th { font-weight: 600; }
td.claim { min-width: 12rem; }
table.sources td.content { min-width: 14rem; }
table.deployments td:is([data-label="Ref"], [data-label="Run"]) { white-space: nowrap; }
/* Narrow screens (a phone is 360 to 430 px wide): nothing wider than the screen. Tables of
   class stack become one block per row, each cell on its line after its column's name. */
@media (max-width: 40rem) {
  header.site, main, footer.site { padding-left: .75rem; padding-right: .75rem; }
  dl.facts { grid-template-columns: minmax(0, 1fr); gap: 0; }
  dl.facts dd { margin-bottom: .5rem; }
  table.stack, table.stack caption, table.stack tbody, table.stack tr, table.stack th, table.stack td { display: block; }
  table.stack thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
  table.stack tr { border-bottom: 1px solid var(--line); padding: .5rem 0; }
  table.stack th, table.stack td { border: 0; padding: .1rem 0; min-width: 0; }
  table.stack [data-label]::before { content: attr(data-label) ": "; font-weight: 600; color: var(--muted); }
  .field small { max-width: none; }
  input, select { max-width: 100%; }
}
.swatch { display: inline-block; width: .9rem; height: .9rem; margin-right: .3rem; vertical-align: middle; }
`;

import type { Timeline } from '../data.js';
import { count } from '../format.js';
import { html, raw, type Html } from '../html.js';

const VERDICTS = ['ALLOWED', 'BLOCKED', 'ESCALATED'] as const;
const WIDTH = 720;
const HEIGHT = 200;
const AXIS = 28;

/**
 * Receipts per day by verdict as stacked bars, drawn on the server (inline SVG, no script),
 * with the same numbers in a table below it for screen readers and for reading exact counts.
 */
export function timelineChart(timeline: Timeline): Html {
  const days = timeline.days;
  const max = Math.max(1, ...days.map((d) => d.total));
  const slot = (WIDTH - AXIS) / Math.max(1, days.length);
  const bar = Math.max(1, slot * 0.7);
  const scale = (HEIGHT - 20) / max;
  const bars = days.map((day, i) => {
    let y = HEIGHT;
    const x = AXIS + i * slot + (slot - bar) / 2;
    const parts = VERDICTS.filter((v) => day[v] > 0).map((verdict) => {
      const h = day[verdict] * scale;
      y -= h;
      return html`<rect
        class="bar ${verdict.toLowerCase()}"
        x="${x.toFixed(1)}"
        y="${y.toFixed(1)}"
        width="${bar.toFixed(1)}"
        height="${h.toFixed(1)}"
        ><title>${day.date}: ${count(day[verdict])} ${verdict}</title></rect
      >`;
    });
    return parts;
  });
  const summary = `${count(days.reduce((n, d) => n + d.total, 0))} receipts from ${timeline.since} to ${timeline.until}, at most ${count(max)} a day`;
  return html`<figure class="chart">
      <svg
        role="img"
        aria-labelledby="chart-title chart-desc"
        viewBox="0 0 ${WIDTH} ${HEIGHT + 4}"
        preserveAspectRatio="xMinYMin meet"
        focusable="false"
      >
        <title id="chart-title">Receipts per day by verdict</title>
        <desc id="chart-desc">${summary}</desc>
        <line class="axis" x1="${AXIS}" y1="${HEIGHT}" x2="${WIDTH}" y2="${HEIGHT}"></line>
        <text class="axis-label" x="0" y="14">${count(max)}</text>
        <text class="axis-label" x="0" y="${HEIGHT}">0</text>
        ${bars}
      </svg>
      <figcaption>
        <ul class="legend">
          ${VERDICTS.map((v) => html`<li><span class="swatch ${v.toLowerCase()}" aria-hidden="true"></span>${v}</li>`)}
        </ul>
      </figcaption>
    </figure>
    <details>
      <summary>Daily counts as a table</summary>
      <table>
        <caption>
          Receipts per day by
          verdict${timeline.repository ? html` in ${timeline.repository}` : raw('')}
        </caption>
        <thead>
          <tr>
            <th scope="col">Day (UTC)</th>
            <th scope="col">Total</th>
            ${VERDICTS.map((v) => html`<th scope="col">${v}</th>`)}
          </tr>
        </thead>
        <tbody>
          ${days
            .filter((d) => d.total > 0)
            .map(
              (d) =>
                html`<tr>
                  <th scope="row">${d.date}</th>
                  <td>${count(d.total)}</td>
                  ${VERDICTS.map((v) => html`<td>${count(d[v])}</td>`)}
                </tr>`,
            )}
        </tbody>
      </table>
    </details>`;
}

import { describe, expect, it } from '@jest/globals';
import { externalLink, html, queryString, raw, safeHref } from '../../../src/explorer/html.js';
import { listFilterOf } from '../../../src/explorer/data.js';

describe('the explorer template', () => {
  it('escapes every interpolated value, in text and in attributes', () => {
    const value = `<img src=x onerror="alert('1')">&\``;
    expect(html`<p title="${value}">${value}</p>`.text).toBe(
      '<p title="&lt;img src=x onerror=&quot;alert(&#39;1&#39;)&quot;&gt;&amp;&#96;">&lt;img src=x onerror=&quot;alert(&#39;1&#39;)&quot;&gt;&amp;&#96;</p>',
    );
  });

  it('inserts markup it built itself as it is, arrays joined, nothing for null and false', () => {
    const items = ['a<b', 'c'].map((x) => html`<li>${x}</li>`);
    // Another name for the tag: Prettier would format an html`` template as HTML.
    const h = html;
    expect(h`<ul>${items}</ul>${null}${undefined}${false}${0}`.text).toBe(
      '<ul><li>a&lt;b</li><li>c</li></ul>0',
    );
    expect(html`${raw('<br>')}`.text).toBe('<br>');
  });

  it('links only http(s) and same-site paths; anything else stays text', () => {
    expect(safeHref('https://ci.example/run/1')).toBe('https://ci.example/run/1');
    expect(safeHref('/explorer/keys')).toBe('/explorer/keys');
    for (const url of [
      'javascript:alert(1)',
      'JaVaScRiPt:alert(1)',
      'data:text/html,x',
      '//evil.example',
      'vbscript:x',
    ])
      expect(safeHref(url)).toBeNull();
    expect(externalLink('javascript:alert(1)').text).toBe('<span>javascript:alert(1)</span>');
    expect(externalLink('https://a.example/?q="x"').text).toBe(
      '<a href="https://a.example/?q=%22x%22" rel="noopener noreferrer nofollow">https://a.example/?q=&quot;x&quot;</a>',
    );
  });

  it('keeps the list filters a query names, non-empty and trimmed, and writes them back', () => {
    const filter = listFilterOf(
      new URLSearchParams('agent=%20bot%20&repo=&verdict=BLOCKED&other=1'),
    );
    expect(filter).toEqual({ agent: 'bot', verdict: 'BLOCKED' });
    expect(queryString({ ...filter, after: 7, q: '' })).toBe('?agent=bot&verdict=BLOCKED&after=7');
  });
});

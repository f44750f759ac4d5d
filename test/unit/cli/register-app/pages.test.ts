import { describe, expect, it } from '@jest/globals';
import { buildManifest } from '../../../../src/cli/register-app/app-manifest.js';
import { renderSetupPage, resultPage } from '../../../../src/cli/register-app/pages.js';

const manifest = buildManifest(
  'name: svc\nurl: https://github.com/apps/svc\ndefault_permissions: { checks: write }\ndefault_events: [check_run]',
  { webhookUrl: 'https://svc.acme.test/v1/webhook/scm', redirectUrl: 'http://127.0.0.1:3001/' },
);

describe('the local pages', () => {
  it('the setup page submits itself to GitHub only through the script that carries the nonce', () => {
    const page = renderSetupPage(
      manifest,
      'https://github.com/settings/apps/new?state=s&x=1',
      'bm9uY2U=',
    );
    expect(page).toContain(
      '<form id="register" method="post" action="https://github.com/settings/apps/new?state=s&amp;x=1">',
    );
    expect(page).toContain(
      '<script nonce="bm9uY2U=">document.getElementById(\'register\').submit();</script>',
    );
    expect(page).toContain('<button type="submit">Continue on GitHub</button>');
    expect(page).toContain('<title>Register svc on GitHub</title>');
  });

  it('a result page escapes its title and text', () => {
    const page = resultPage('Registration <failed>', `GitHub said "no" & <b>why</b>`);
    expect(page).toContain('<title>Registration &lt;failed&gt;</title>');
    expect(page).toContain('<h1>Registration &lt;failed&gt;</h1>');
    expect(page).toContain('<p>GitHub said &quot;no&quot; &amp; &lt;b&gt;why&lt;/b&gt;</p>');
    expect(page).not.toMatch(/<b>|<script/);
  });
});

import { describe, expect, it } from '@jest/globals';
import { getPrivateKey } from '@probot/get-private-key';
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseEnv } from 'node:util';
import {
  buildManifest,
  credentialsEnv,
  EnvConflictError,
  githubUrls,
  HELP,
  mergeEnvFile,
  OPTIONS,
  RegistrationError,
  renderSetupPage,
  UsageError,
  type AppConversion,
} from '../../../src/cli/register-app.js';

const APP_YML = readFileSync(fileURLToPath(new URL('../../../app.yml', import.meta.url)), 'utf8');
const WEBHOOK = 'https://svc.acme.test/v1/webhook/scm';
const REDIRECT = 'http://127.0.0.1:3001/';

// A real RSA key in the PKCS#1 form GitHub issues for Apps.
const PEM = generateKeyPairSync('rsa', { modulusLength: 1024 })
  .privateKey.export({ type: 'pkcs1', format: 'pem' })
  .toString();

const conversion = (over: Partial<AppConversion> = {}): AppConversion => ({
  id: 424242,
  slug: 'svc-acme',
  name: 'svc-acme',
  html_url: 'https://github.com/apps/svc-acme',
  pem: PEM,
  webhook_secret: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4',
  client_id: 'Iv23liAbCdEf012345',
  client_secret: '0123456789abcdef0123456789abcdef01234567',
  ...over,
});

describe('buildManifest', () => {
  it('keeps exactly the least permissions and the events the App handles', () => {
    const manifest = buildManifest(APP_YML, { webhookUrl: WEBHOOK, redirectUrl: REDIRECT });
    expect(manifest.default_permissions).toEqual({
      checks: 'write',
      pull_requests: 'read',
      contents: 'read',
      statuses: 'read',
      metadata: 'read',
      // GitHub delivers merge_group only to Apps holding this permission.
      merge_queues: 'read',
      // Answering a deployment protection rule is a write to the deployment; GitHub delivers
      // deployment_protection_rule only to Apps holding it.
      deployments: 'write',
      // The workflow run a waiting deployment belongs to.
      actions: 'read',
    });
    expect([...manifest.default_events].sort()).toEqual(
      [
        'check_run',
        'check_suite',
        'deployment_protection_rule',
        'merge_group',
        'pull_request',
        'pull_request_review',
        'status',
      ].sort(),
    );
    expect(manifest.default_events).toHaveLength(7);
    expect(Object.values(manifest.default_permissions)).not.toContain('admin');
  });

  it('points the webhook and the redirect at the given URLs and stays private', () => {
    const manifest = buildManifest(APP_YML, { webhookUrl: WEBHOOK, redirectUrl: REDIRECT });
    expect(manifest.hook_attributes).toEqual({ url: WEBHOOK, active: true });
    expect(manifest.redirect_url).toBe(REDIRECT);
    expect(manifest.public).toBe(false);
    expect(manifest.name).toBe('svc');
    expect(manifest.url).toBe('https://github.com/apps/svc');
    expect(manifest.description).toMatch(/signed decision receipts/);
    expect(JSON.stringify(manifest)).not.toContain('svc.example.com');
  });

  it('takes another name when asked, without touching the file', () => {
    const manifest = buildManifest(APP_YML, {
      webhookUrl: WEBHOOK,
      redirectUrl: REDIRECT,
      name: 'svc-acme',
    });
    expect(manifest.name).toBe('svc-acme');
    expect(buildManifest(APP_YML, { webhookUrl: WEBHOOK, redirectUrl: REDIRECT }).name).toBe('svc');
  });

  it('passes other manifest members through and defaults to a private App', () => {
    const manifest = buildManifest(
      [
        'name: x',
        'url: https://example.com',
        'setup_url: https://example.com/setup',
        'default_permissions: { checks: write }',
        'default_events: [check_run]',
      ].join('\n'),
      { webhookUrl: WEBHOOK, redirectUrl: REDIRECT },
    );
    expect(manifest).toMatchObject({
      setup_url: 'https://example.com/setup',
      public: false,
      hook_attributes: { url: WEBHOOK },
    });
  });

  it('says which member of a broken manifest is wrong', () => {
    const build = (text: string) => () =>
      buildManifest(text, { webhookUrl: WEBHOOK, redirectUrl: REDIRECT });
    expect(build('name: [unclosed')).toThrow(/not valid YAML/);
    expect(build('name: x\nurl: https://e.com\ndefault_events: []')).toThrow(/default_permissions/);
    expect(
      build(
        'name: x\nurl: https://e.com\ndefault_events: []\ndefault_permissions: { checks: all }',
      ),
    ).toThrow(/default_permissions\.checks/);
    expect(build('just text')).toThrow(RegistrationError);
  });
});

describe('githubUrls', () => {
  it('targets github.com for an account and for an organization', () => {
    expect(githubUrls({})).toEqual({
      createAppUrl: 'https://github.com/settings/apps/new',
      apiUrl: 'https://api.github.com',
    });
    expect(githubUrls({}, 'acme-inc').createAppUrl).toBe(
      'https://github.com/organizations/acme-inc/settings/apps/new',
    );
  });

  it('targets GitHub Enterprise Server from GHE_HOST and GHE_PROTOCOL', () => {
    expect(githubUrls({ GHE_HOST: 'ghe.acme.test' }, 'platform')).toEqual({
      createAppUrl: 'https://ghe.acme.test/organizations/platform/settings/apps/new',
      apiUrl: 'https://ghe.acme.test/api/v3',
    });
    expect(githubUrls({ GHE_HOST: 'ghe.lan:8080', GHE_PROTOCOL: 'http' })).toEqual({
      createAppUrl: 'http://ghe.lan:8080/settings/apps/new',
      apiUrl: 'http://ghe.lan:8080/api/v3',
    });
  });

  it('refuses values that would aim the form or the exchange elsewhere', () => {
    expect(() => githubUrls({}, '../../evil')).toThrow(UsageError);
    expect(() => githubUrls({}, 'acme/settings')).toThrow(/--org/);
    expect(() => githubUrls({ GHE_PROTOCOL: 'ftp' })).toThrow(/GHE_PROTOCOL/);
    expect(() => githubUrls({ GHE_HOST: 'evil.test/x?' })).toThrow(/GHE_HOST/);
    // The answer holds a private key: no plain http to another machine.
    expect(() => githubUrls({}, undefined, 'http://api.evil.test')).toThrow(/https/);
    expect(githubUrls({}, undefined, 'http://127.0.0.1:9999/').apiUrl).toBe(
      'http://127.0.0.1:9999',
    );
  });
});

describe('mergeEnvFile', () => {
  const values = credentialsEnv(conversion());

  it('writes every setting into a new file, the PEM on one escaped, quoted line', () => {
    const { content, replaced, removed } = mergeEnvFile(null, values, { force: false });
    const lines = content.trimEnd().split('\n');
    expect(lines.map((l) => l.split('=')[0])).toEqual([
      'APP_ID',
      'PRIVATE_KEY',
      'WEBHOOK_SECRET',
      'GITHUB_CLIENT_ID',
      'GITHUB_CLIENT_SECRET',
    ]);
    expect(lines[0]).toBe('APP_ID=424242');
    expect(lines[1]).toMatch(/^PRIVATE_KEY="-----BEGIN RSA PRIVATE KEY-----\\nMI.*\\n"$/);
    expect(content.endsWith('\n')).toBe(true);
    expect(replaced).toEqual([]);
    expect(removed).toEqual([]);
  });

  it('escapes the PEM so that Probot reads back the exact key', () => {
    const { content } = mergeEnvFile(null, values, { force: false });
    const parsed = parseEnv(content);
    expect(parsed.APP_ID).toBe('424242');
    // Loaders differ: some expand \n inside double quotes, others (node --env-file on Node 20)
    // keep it; Probot's key loader accepts both.
    expect(getPrivateKey({ env: { PRIVATE_KEY: parsed.PRIVATE_KEY } })).toBe(PEM);
    const literal = /^PRIVATE_KEY="(.*)"$/m.exec(content)![1]!;
    expect(literal).not.toContain(String.fromCharCode(10));
    expect(getPrivateKey({ env: { PRIVATE_KEY: literal } })).toBe(PEM);
  });

  it('keeps unrelated lines, comments and blank lines where they were', () => {
    const existing = '# svc\nPORT=3000\n\nexport SVC_BASE_URL=https://svc.acme.test\nAPP_ID=\n';
    const { content } = mergeEnvFile(existing, values, { force: false });
    expect(
      content.startsWith('# svc\nPORT=3000\n\nexport SVC_BASE_URL=https://svc.acme.test\n'),
    ).toBe(true);
    // An empty placeholder is filled in place, not counted as another App's setting.
    expect(content).toContain('SVC_BASE_URL=https://svc.acme.test\nAPP_ID=424242\nPRIVATE_KEY="');
    expect(content.match(/^APP_ID=/gm)).toHaveLength(1);
  });

  it('refuses to replace another App’s settings without force, naming them', () => {
    const existing = 'PORT=3000\nAPP_ID=1\nWEBHOOK_SECRET=old\n';
    expect(() => mergeEnvFile(existing, values, { force: false, path: '/srv/.env' })).toThrow(
      new EnvConflictError('/srv/.env', ['APP_ID', 'WEBHOOK_SECRET']),
    );
    expect(() => mergeEnvFile('PRIVATE_KEY_PATH=old.pem\n', {}, { force: false })).toThrow(
      /PRIVATE_KEY_PATH.*--force/,
    );
  });

  it('with force replaces them in place and drops the old key path', () => {
    const existing = [
      'PORT=3000',
      'APP_ID=1',
      'PRIVATE_KEY="-----BEGIN RSA PRIVATE KEY-----',
      'OLDKEYLINE',
      '-----END RSA PRIVATE KEY-----"',
      'PRIVATE_KEY_PATH=old.pem',
      'LOG_LEVEL=info',
    ].join('\n');
    const { content, replaced, removed } = mergeEnvFile(existing, values, { force: true });
    expect(content).not.toContain('OLDKEYLINE');
    expect(content).not.toContain('PRIVATE_KEY_PATH');
    expect(content.split('\n').slice(0, 3)).toEqual([
      'PORT=3000',
      'APP_ID=424242',
      `PRIVATE_KEY=${values.PRIVATE_KEY}`,
    ]);
    expect(content).toContain('\nLOG_LEVEL=info\nWEBHOOK_SECRET=');
    expect(replaced.sort()).toEqual(['APP_ID', 'PRIVATE_KEY']);
    expect(removed).toEqual(['PRIVATE_KEY_PATH']);
    expect(parseEnv(content).LOG_LEVEL).toBe('info');
  });

  it('leaves out WEBHOOK_SECRET when GitHub returned none', () => {
    expect(Object.keys(credentialsEnv(conversion({ webhook_secret: null })))).toEqual([
      'APP_ID',
      'PRIVATE_KEY',
      'GITHUB_CLIENT_ID',
      'GITHUB_CLIENT_SECRET',
    ]);
  });
});

describe('renderSetupPage', () => {
  it('escapes the manifest into the form so that quotes cannot break out', () => {
    const manifest = buildManifest(APP_YML, {
      webhookUrl: WEBHOOK,
      redirectUrl: REDIRECT,
      name: `x'"><script>`,
    });
    const page = renderSetupPage(manifest, 'https://github.com/settings/apps/new?state=s', 'n0');
    expect(page).not.toContain('<script>"');
    expect(page).toContain('&#39;&quot;&gt;&lt;script&gt;');
    expect(page.match(/<script/g)).toHaveLength(1);
    const value = /name="manifest" value="([^"]*)"/.exec(page)![1]!;
    const decoded = value
      .replace(/&quot;/g, '"')
      .replace(/&#39;/g, "'")
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&amp;/g, '&');
    expect(JSON.parse(decoded)).toEqual(manifest);
  });
});

describe('HELP', () => {
  it('documents every option the command takes', () => {
    for (const [name, option] of Object.entries(OPTIONS)) {
      const value = option.type === 'string' ? ` <` : '';
      expect(HELP).toMatch(new RegExp(`^  (-\\w, )?--${name}${value}`, 'm'));
    }
  });

  it('shows --out and --name in its example, and no flag Node takes for itself', () => {
    expect(HELP).toMatch(/npm run register-app -- .*\n.*--name svc-acme --out \.env/);
    expect(Object.keys(OPTIONS)).not.toContain('env-file');
  });
});

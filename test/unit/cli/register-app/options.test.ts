import { describe, expect, it } from '@jest/globals';
import { UsageError } from '../../../../src/cli/register-app/errors.js';
import { parseOptions } from '../../../../src/cli/register-app/options.js';

const io = (env: Record<string, string | undefined> = {}) => ({ env, cwd: '/srv/svc' });
const HOOK = 'https://svc.acme.test/v1/webhook/scm';

describe('parseOptions', () => {
  it('defaults: port 3001, .env and app.yml in the working directory, one hour, github.com', () => {
    expect(parseOptions([], io({ SVC_BASE_URL: 'https://svc.acme.test/' }))).toEqual({
      port: 3001,
      webhookUrl: HOOK,
      org: undefined,
      name: undefined,
      envFile: '/srv/svc/.env',
      manifestPath: '/srv/svc/app.yml',
      force: false,
      timeoutMs: 3_600_000,
      urls: {
        createAppUrl: 'https://github.com/settings/apps/new',
        apiUrl: 'https://api.github.com',
      },
      extraPermissions: {},
    });
  });

  it('takes every option', () => {
    const options = parseOptions(
      [
        '--webhook-url',
        'https://smee.io/abc',
        '--org',
        'acme',
        '--name',
        'svc-acme',
        '--out',
        'secrets/app.env',
        '--force',
        '--port',
        '0',
        '--manifest',
        '/etc/app.yml',
        '--api-url',
        'http://127.0.0.1:9999',
        '--timeout',
        '0.5',
      ],
      io(),
    );
    expect(options).toEqual({
      port: 0,
      webhookUrl: 'https://smee.io/abc',
      org: 'acme',
      name: 'svc-acme',
      envFile: '/srv/svc/secrets/app.env',
      manifestPath: '/etc/app.yml',
      force: true,
      timeoutMs: 30_000,
      urls: {
        createAppUrl: 'https://github.com/organizations/acme/settings/apps/new',
        apiUrl: 'http://127.0.0.1:9999',
      },
      extraPermissions: {},
    });
  });

  it('help and version win over everything else', () => {
    expect(parseOptions(['--help'], io())).toBe('help');
    expect(parseOptions(['-h'], io())).toBe('help');
    expect(parseOptions(['--version'], io())).toBe('version');
  });

  it.each([
    [['--env-file', '.env'], /--env-file is an option of Node itself/],
    [['--env-file=.env'], /--env-file is an option of Node itself/],
    [['--webhook-url', HOOK, '--port', '70000'], /--port must be a port number/],
    [['--webhook-url', HOOK, '--port', '80x'], /--port must be a port number/],
    [['--webhook-url', HOOK, '--timeout', '0'], /--timeout must be a positive number/],
    [['--webhook-url', 'ftp://svc.acme.test/hook'], /the webhook URL must be an http\(s\) URL/],
    [['--webhook-url', HOOK, '--name', 'x'.repeat(35)], /--name must have 1 to 34 characters/],
    [['--webhook-url', HOOK, '--org', '../evil'], /--org must be an organization login/],
    [[], /say where GitHub delivers events/],
  ])('%j is wrong usage', (argv, message) => {
    let thrown: unknown;
    try {
      parseOptions(argv, io());
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(UsageError);
    expect((thrown as Error).message).toMatch(message);
  });

  it('an unknown option or a positional argument is node:util’s parse error', () => {
    for (const argv of [
      ['--webhook-url', HOOK, '--nope'],
      ['--webhook-url', HOOK, 'extra'],
    ])
      expect(() => parseOptions(argv, io())).toThrow(
        expect.objectContaining({ code: expect.stringMatching(/^ERR_PARSE_ARGS_/) }),
      );
  });
});

import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { RegistrationError } from '../../../../src/cli/register-app/errors.js';
import { exchangeManifestCode } from '../../../../src/cli/register-app/manifest-conversion.js';

const PEM = generateKeyPairSync('rsa', { modulusLength: 1024 })
  .privateKey.export({ type: 'pkcs1', format: 'pem' })
  .toString();
const ANSWER = {
  id: 424242,
  slug: 'svc-acme',
  name: 'svc-acme',
  html_url: 'https://github.com/apps/svc-acme',
  pem: PEM,
  webhook_secret: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4',
  client_id: 'Iv23liAbCdEf012345',
  client_secret: '0123456789abcdef0123456789abcdef01234567',
  owner: { login: 'acme' },
};

/** A fetch that records its calls and answers `status` with `body`. */
function fakeFetch(status: number, body: unknown) {
  const calls: { url: string; init: RequestInit }[] = [];
  const fetch = (async (url: string, init: RequestInit) => {
    calls.push({ url, init });
    return new Response(JSON.stringify(body), { status });
  }) as unknown as typeof globalThis.fetch;
  return { fetch, calls };
}

describe('exchangeManifestCode', () => {
  it('POSTs the code to /app-manifests/{code}/conversions without credentials and answers the App', async () => {
    const { fetch, calls } = fakeFetch(201, ANSWER);
    const app = await exchangeManifestCode('abc_123-x', {
      apiUrl: 'https://ghe.acme.test/api/v3/',
      fetch,
    });
    expect(calls).toHaveLength(1);
    expect(calls[0]!.url).toBe('https://ghe.acme.test/api/v3/app-manifests/abc_123-x/conversions');
    expect(calls[0]!.init.method).toBe('POST');
    expect(calls[0]!.init.headers).toEqual({
      accept: 'application/vnd.github+json',
      'x-github-api-version': '2022-11-28',
      'user-agent': 'svc-register-app',
    });
    // Members svc does not use (owner, permissions, …) are not kept.
    const kept: Partial<typeof ANSWER> = { ...ANSWER };
    delete kept.owner;
    expect(app).toEqual(kept);
  });

  it('sends no request for a code that is not a plain token', async () => {
    const { fetch, calls } = fakeFetch(201, ANSWER);
    for (const code of ['', '../../user', 'a b', 'x'.repeat(201)])
      await expect(
        exchangeManifestCode(code, { apiUrl: 'https://api.github.com', fetch }),
      ).rejects.toThrow('the code in GitHub’s redirect is malformed');
    expect(calls).toEqual([]);
  });

  it('refuses an answer whose values would add lines to the env file, naming the members', async () => {
    const { fetch } = fakeFetch(201, {
      ...ANSWER,
      client_secret: 'secret\nAPP_ID=1',
      webhook_secret: 'a b',
    });
    const exchange = exchangeManifestCode('abc', { apiUrl: 'https://api.github.com', fetch });
    await expect(exchange).rejects.toThrow(RegistrationError);
    await expect(
      exchangeManifestCode('abc', { apiUrl: 'https://api.github.com', fetch }),
    ).rejects.toThrow(
      "GitHub's answer to the code exchange is not an App registration (webhook_secret, client_secret)",
    );
  });

  it('a GitHub without a webhook secret is an App all the same', async () => {
    const { fetch } = fakeFetch(201, { ...ANSWER, webhook_secret: null });
    const app = await exchangeManifestCode('abc', { apiUrl: 'https://api.github.com', fetch });
    expect(app.webhook_secret).toBeNull();
  });

  it('says what GitHub answered otherwise, in one short line', async () => {
    const { fetch } = fakeFetch(500, { message: `boom\u0000\n${'x'.repeat(400)}` });
    const error = (await exchangeManifestCode('abc', {
      apiUrl: 'https://api.github.com',
      fetch,
    }).catch((e: unknown) => e)) as Error;
    expect(error).toBeInstanceOf(RegistrationError);
    expect(error.message).toMatch(/^GitHub answered 500: boom x{290,300} to the code exchange$/);
  });
});

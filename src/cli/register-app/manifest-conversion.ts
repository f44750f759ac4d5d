import { z } from 'zod';
import { RegistrationError } from './errors.js';

/** The conversion answer of POST /app-manifests/{code}/conversions, as far as svc needs it. */
export interface AppConversion {
  id: number;
  slug: string;
  name: string;
  html_url: string;
  pem: string;
  webhook_secret: string | null;
  client_id: string;
  client_secret: string;
}

// Every value lands on one line of the env file: a newline, quote or space inside one would
// let the answer add lines of its own, so anything outside these shapes is refused.
const token = z.string().regex(/^[A-Za-z0-9._~+/=-]{1,512}$/, 'must be a plain token');
const pem = z
  .string()
  .regex(
    /^-----BEGIN [A-Z ]{1,40}-----\r?\n[A-Za-z0-9+/=\r\n]+-----END [A-Z ]{1,40}-----\r?\n?$/,
    'must be a PEM private key',
  );

const conversionSchema = z.object({
  id: z.number().int().positive(),
  slug: z.string().min(1),
  name: z.string().min(1),
  html_url: z.url({ protocol: /^https?$/ }),
  pem,
  webhook_secret: token.nullable(),
  client_id: token,
  client_secret: token,
});

export interface ExchangeOptions {
  /** REST API base: https://api.github.com, <GHE>/api/v3, or a test double. */
  apiUrl: string;
  fetch?: typeof fetch;
  timeoutMs?: number;
}

// GitHub's message is shown to the operator: one short line, no control characters.
const shorten = (text: string) =>
  text
    .replace(/\p{Cc}+/gu, ' ')
    .trim()
    .slice(0, 300);

/**
 * Exchanges the one-time code of GitHub's redirect for the new App's ID, private key, webhook
 * secret and OAuth client credentials (POST /app-manifests/{code}/conversions, no
 * authentication: the code is the credential). Throws RegistrationError with the reason.
 */
export async function exchangeManifestCode(
  code: string,
  options: ExchangeOptions,
): Promise<AppConversion> {
  // The code comes from a query string: it goes into a URL path only if it is a plain token.
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(code)) {
    throw new RegistrationError('the code in GitHub’s redirect is malformed');
  }
  const fetcher = options.fetch ?? fetch;
  const url = `${options.apiUrl.replace(/\/+$/, '')}/app-manifests/${code}/conversions`;
  let response: Response;
  try {
    response = await fetcher(url, {
      method: 'POST',
      headers: {
        accept: 'application/vnd.github+json',
        'x-github-api-version': '2022-11-28',
        'user-agent': 'svc-register-app',
      },
      signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
    });
  } catch (error) {
    const cause = (error as Error & { cause?: Error }).cause?.message ?? (error as Error).message;
    throw new RegistrationError(`could not reach ${new URL(url).origin}: ${shorten(cause)}`);
  }
  const text = await response.text().catch(() => '');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (response.status !== 201 && response.status !== 200) {
    const message = (body as { message?: unknown } | undefined)?.message;
    const detail = typeof message === 'string' && message ? `: ${shorten(message)}` : '';
    if (response.status === 404) {
      throw new RegistrationError(
        `GitHub does not know this code (404${detail}). A code works once and for one hour: run npm run register-app again`,
      );
    }
    if (response.status === 422) {
      throw new RegistrationError(
        `GitHub refused to create the App (422${detail}). Check the manifest and run npm run register-app again`,
      );
    }
    throw new RegistrationError(`GitHub answered ${response.status}${detail} to the code exchange`);
  }
  const parsed = conversionSchema.safeParse(body);
  if (!parsed.success) {
    const members = [...new Set(parsed.error.issues.map((i) => i.path.join('.') || 'body'))];
    throw new RegistrationError(
      `GitHub's answer to the code exchange is not an App registration (${members.join(', ')})`,
    );
  }
  return parsed.data;
}

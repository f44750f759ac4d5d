import type { ServerResponse } from 'node:http';
import helmet, { type HelmetOptions } from 'helmet';

/** helmet's settings for every response. */
export const SECURITY_HEADER_OPTIONS: Readonly<HelmetOptions> = {
  // The API answers JSON; only /docs renders, from its own files (no inline script).
  contentSecurityPolicy: {
    directives: { 'frame-ancestors': ["'none'"], 'upgrade-insecure-requests': null },
  },
  frameguard: { action: 'deny' },
  referrerPolicy: { policy: 'no-referrer' },
  // HSTS belongs to the TLS terminator in front of svc, which knows the real scheme.
  strictTransportSecurity: false,
};

type Step =
  { set: [name: string, value: string | number | readonly string[]] } | { remove: string };

/**
 * The headers helmet sets with `options`, in its order, as one function of the response.
 * helmet's middleware is run once, here, against a response that records what it is told:
 * with static settings (no function directives, which would read the request) its headers
 * are the same on every response, and rebuilding them per request (eleven middleware calls,
 * the policy string joined again) was a measurable share of a cheap request.
 */
export function securityHeaders(
  options: Readonly<HelmetOptions> = SECURITY_HEADER_OPTIONS,
): (res: ServerResponse) => void {
  const steps: Step[] = [];
  const recorder = {
    setHeader(name: string, value: string | number | readonly string[]) {
      steps.push({ set: [name, value] });
      return recorder;
    },
    removeHeader(name: string) {
      steps.push({ remove: name });
    },
  };
  let done = false;
  helmet(options)({} as never, recorder as never, (error?: unknown) => {
    if (error) throw error;
    done = true;
  });
  // helmet calls its middleware synchronously; anything else would mean per-request state.
  if (!done) throw new TypeError('helmet did not finish synchronously');
  return (res) => {
    for (const step of steps) {
      if ('set' in step) res.setHeader(step.set[0], step.set[1]);
      else res.removeHeader(step.remove);
    }
  };
}

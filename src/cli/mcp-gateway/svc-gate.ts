import { z } from 'zod';
import type { ClaimInput } from '../../core/claim-schema.js';

// How the gateway asks svc: the mcp harness's event POSTed to /v1/hooks/mcp (packages/hook,
// src/harnesses/mcp.ts), its JSON answer read back. One long-lived process makes many calls,
// so it uses fetch and its kept-alive connections, not svc-hook's one-shot HTTP.

/** The event the gateway sends (docs/MCP.md, "What the gateway sends svc"). */
export interface GatewayHookEvent {
  hook_event_name: 'PreToolUse' | 'PostToolUse';
  session_id: string;
  cwd?: string;
  agent?: string;
  tool_name: string;
  tool_input: Record<string, unknown>;
  tool_use_id: string;
  tool_response?: { isError: boolean; result_digest?: string };
}

const answerSchema = z.object({
  decision: z.enum(['allow', 'deny']),
  verdict: z.enum(['ALLOWED', 'BLOCKED', 'ESCALATED']),
  reason: z.string().min(1).max(4096),
  receipt_id: z.string().max(256).optional(),
  receipt_url: z.string().max(4096).optional(),
});

/** svc's decision on a call. */
export type GateAnswer = z.infer<typeof answerSchema>;

/** A decision, or the problem that kept one from arriving (the call is then refused). */
export type GateResult = { ok: true; answer: GateAnswer } | { ok: false; problem: string };

/** Of /v1/simulate's answer, the verdict only. */
const simulatedSchema = z.object({
  receipt: z.object({ policy: z.object({ verdict: z.enum(['ALLOWED', 'BLOCKED', 'ESCALATED']) }) }),
});

/** A dry run's verdict, or the problem that kept it from arriving. */
export type DryRunResult =
  { ok: true; verdict: GateAnswer['verdict'] } | { ok: false; problem: string };

export interface SvcGateOptions {
  baseUrl: string;
  apiKey: string;
  policy?: string;
  timeoutMs: number;
}

/** Bounds on what svc may send back: an answer is a few hundred bytes, a dry run a few KiB. */
const MAX_ANSWER_CHARS = 64 * 1024;

/** The `error`, code and request id of svc's error body, for the message. */
function errorDetail(text: string): string {
  try {
    const body = JSON.parse(text) as Record<string, unknown>;
    const parts = [
      body['error'],
      body['code'],
      body['request_id'] && `request ${String(body['request_id'])}`,
    ]
      .filter((p): p is string => typeof p === 'string' && p.length > 0)
      .map((p) => p.slice(0, 300));
    return parts.length ? `: ${parts.join(', ')}` : '';
  } catch {
    return '';
  }
}

/** The hook endpoint's URL, checked once at start: a bad SVC_URL is a usage error. */
export function hookUrl(baseUrl: string, policy?: string): URL {
  let url: URL;
  try {
    url = new URL(`${baseUrl.replace(/\/+$/, '')}/v1/hooks/mcp`);
  } catch {
    throw new TypeError(`SVC_URL is not a URL: ${baseUrl.slice(0, 200)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TypeError(`SVC_URL must be an http or https URL, not ${url.protocol}`);
  }
  if (url.username || url.password) throw new TypeError('SVC_URL must not carry credentials');
  if (policy) url.searchParams.set('policy', policy);
  return url;
}

export class SvcGate {
  private readonly url: URL;
  /** POST /v1/simulate, beside the hook endpoint: evaluates a claim and records nothing. */
  private readonly simulateUrl: URL;

  constructor(private readonly options: SvcGateOptions) {
    this.url = hookUrl(options.baseUrl, options.policy);
    this.simulateUrl = new URL('../simulate', this.url);
  }

  /** The policy the hook endpoint decides under when the key is not locked. */
  get policy(): string | undefined {
    return this.options.policy;
  }

  private async post(body: unknown, url = this.url): Promise<{ status: number; text: string }> {
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        'x-api-key': this.options.apiKey,
        'user-agent': 'svc-mcp-gateway',
      },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(this.options.timeoutMs),
      redirect: 'error',
    });
    const text = await response.text();
    return { status: response.status, text: text.slice(0, MAX_ANSWER_CHARS) };
  }

  private problemOf(error: unknown): string {
    const e = error as Error & { cause?: { code?: string; message?: string } };
    if (e.name === 'TimeoutError' || e.name === 'AbortError') {
      return `svc did not answer within ${this.options.timeoutMs} ms`;
    }
    const cause = e.cause?.code ?? e.cause?.message ?? e.message;
    return `svc cannot be reached at ${this.url.origin}: ${cause}`;
  }

  /** The JSON of svc's 200 answer, or why there is none. Never throws. */
  private async answerOf(
    send: () => Promise<{ status: number; text: string }>,
  ): Promise<{ ok: true; value: unknown } | { ok: false; problem: string }> {
    let reply: { status: number; text: string };
    try {
      reply = await send();
    } catch (error) {
      return { ok: false, problem: this.problemOf(error) };
    }
    if (reply.status !== 200) {
      return { ok: false, problem: `svc answered HTTP ${reply.status}${errorDetail(reply.text)}` };
    }
    try {
      return { ok: true, value: JSON.parse(reply.text) as unknown };
    } catch {
      return { ok: false, problem: "svc's answer is not JSON" };
    }
  }

  /** svc's decision on a call about to be made. Never throws. */
  async decide(event: GatewayHookEvent): Promise<GateResult> {
    const body = await this.answerOf(() => this.post(event));
    if (!body.ok) return body;
    const parsed = answerSchema.safeParse(body.value);
    if (!parsed.success) return { ok: false, problem: "svc's answer is not an mcp hook answer" };
    return { ok: true, answer: parsed.data };
  }

  /** svc's verdict on a claim, evaluated as evaluate would and recorded nowhere. Never throws. */
  async dryRun(claim: ClaimInput): Promise<DryRunResult> {
    const body = await this.answerOf(() => this.post(claim, this.simulateUrl));
    if (!body.ok) return body;
    const parsed = simulatedSchema.safeParse(body.value);
    if (!parsed.success) return { ok: false, problem: "svc's answer is not a simulation" };
    return { ok: true, verdict: parsed.data.receipt.policy.verdict };
  }

  /** Records a call's outcome; the problem, if svc did not record it. Never throws. */
  async report(event: GatewayHookEvent): Promise<string | undefined> {
    try {
      const reply = await this.post(event);
      if (reply.status === 200) return undefined;
      return `svc answered HTTP ${reply.status}${errorDetail(reply.text)}`;
    } catch (error) {
      return this.problemOf(error);
    }
  }
}

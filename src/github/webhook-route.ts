import { verify } from '@octokit/webhooks-methods';
import express, { type ErrorRequestHandler, type Request, type RequestHandler } from 'express';
import type { Logger } from 'pino';
import { isVerifyError, parseStrictJson } from '@svc/verify';
import { isSvcError, SvcError } from '../core/errors.js';
import { MAX_BODY_BYTES } from '../core/limits.js';
import { clipText } from '../core/text.js';
import {
  GITHUB_DELIVERY_JOB,
  type JobPayload,
  type JobQueue,
  type JsonValue,
} from '../ports/job-queue.js';

export const WEBHOOK_PATH = '/v1/webhook/scm';

const utf8 = new TextDecoder('utf-8', { fatal: true });

// Attacker-controlled headers, capped: enough to find the delivery in GitHub's list.
const header = (req: Request, name: string): string | undefined => {
  const value = req.headers[name];
  return typeof value === 'string' ? clipText(value, 128, '…') : undefined;
};

export type DeliveryJob = JobPayload<typeof GITHUB_DELIVERY_JOB>;

/**
 * POST /v1/webhook/scm. The signature is checked over the raw bytes before anything parses
 * them (401 otherwise, also when no secret is configured); an accepted delivery is recorded
 * durably, keyed by X-GitHub-Delivery so a redelivery is recognised, and answered 202 at once:
 * GitHub wants an answer within 10 s and does not redeliver on its own. The evaluation runs
 * from the job queue.
 */
export function webhookRoute(deps: {
  secret: string | undefined;
  /** Null when the App has no credentials: deliveries are acknowledged and logged only. */
  queue: JobQueue | null;
  log: Logger;
}): (RequestHandler | ErrorRequestHandler)[] {
  const raw = express.raw({ type: () => true, limit: MAX_BODY_BYTES });
  /**
   * Why a delivery was refused, at warn: a wrong secret or a proxy that rewrites bodies shows
   * here, not only as GitHub's red delivery. Never the body, the signature or the secret.
   */
  const rejected = (req: Request, reason: string, code: string) =>
    deps.log.warn(
      {
        delivery: header(req, 'x-github-delivery'),
        event: header(req, 'x-github-event'),
        reason,
        code,
        request_id: req.id,
      },
      'webhook delivery rejected',
    );
  // Reading the body failed (too large, a broken encoding): the error middleware answers.
  const unreadable: ErrorRequestHandler = (error: unknown, req, _res, next) => {
    const { type } = (error ?? {}) as { type?: unknown };
    rejected(
      req,
      type === 'entity.too.large' ? 'body larger than 1 MiB' : 'body could not be read',
      type === 'entity.too.large' ? 'payload_too_large' : 'malformed_json',
    );
    next(error);
  };
  const handle: RequestHandler = async (req, res) => {
    res.locals.route = WEBHOOK_PATH;
    const signature = req.headers['x-hub-signature-256'];
    const bytes = req.body instanceof Buffer ? req.body : Buffer.alloc(0);
    let text: string;
    try {
      text = utf8.decode(bytes);
    } catch {
      text = bytes.toString('latin1');
    }
    // Constant-time comparison inside verify(); a garbled header is a mismatch, not an error.
    const valid =
      deps.secret !== undefined &&
      typeof signature === 'string' &&
      (await verify(deps.secret, text, signature).catch(() => false));
    if (!valid) {
      rejected(
        req,
        deps.secret === undefined
          ? 'no webhook secret configured (WEBHOOK_SECRET)'
          : typeof signature !== 'string'
            ? 'no X-Hub-Signature-256 header'
            : 'X-Hub-Signature-256 does not match the body and the webhook secret',
        'unauthorized',
      );
      throw new SvcError(
        'unauthorized',
        deps.secret === undefined
          ? 'Webhook deliveries are not accepted: WEBHOOK_SECRET is not configured'
          : 'Missing or invalid X-Hub-Signature-256',
      );
    }
    let payload: unknown;
    try {
      payload = parseStrictJson(text);
    } catch (error) {
      // Only the code: the parser's message quotes the body.
      const code = isSvcError(error) || isVerifyError(error) ? error.code : 'malformed_json';
      rejected(req, 'the signed body is not acceptable JSON', code);
      throw error;
    }
    const id = req.headers['x-github-delivery'];
    const name = req.headers['x-github-event'];
    if (
      typeof id !== 'string' ||
      !/^[\w-]{1,128}$/.test(id) ||
      typeof name !== 'string' ||
      !/^[a-z_]{1,64}$/.test(name)
    ) {
      rejected(
        req,
        'X-GitHub-Delivery or X-GitHub-Event missing or malformed',
        'validation_failed',
      );
      throw new SvcError(
        'validation_failed',
        'X-GitHub-Delivery and X-GitHub-Event must name the delivery and its event',
      );
    }
    const action =
      typeof payload === 'object' && payload !== null && 'action' in payload
        ? String((payload as { action: unknown }).action)
        : undefined;
    if (!deps.queue) {
      deps.log.info(
        { delivery: id, event: name, action },
        'webhook acknowledged: GitHub App not configured (APP_ID, PRIVATE_KEY)',
      );
      res.status(202).json({ accepted: true, delivery: id, status: 'not_configured' });
      return;
    }
    const job: DeliveryJob = { id, name, payload: payload as JsonValue };
    const { created } = await deps.queue.enqueue(GITHUB_DELIVERY_JOB, job, {
      dedupeKey: `github:${id}`,
    });
    deps.log.info({ delivery: id, event: name, action, duplicate: !created }, 'webhook accepted');
    res
      .status(202)
      .json({ accepted: true, delivery: id, status: created ? 'queued' : 'duplicate' });
  };
  return [raw, unreadable, handle];
}

import { verify } from '@octokit/webhooks-methods';
import express, { type RequestHandler } from 'express';
import type { Logger } from 'pino';
import { SvcError } from '../core/errors.js';
import { MAX_BODY_BYTES } from '../core/limits.js';
import { parseStrictJson } from '../core/strict-json.js';
import type { JobQueue, JsonValue } from '../ports/job-queue.js';

export const WEBHOOK_PATH = '/v1/webhook/scm';
export const DELIVERY_JOB = 'github.delivery';

const utf8 = new TextDecoder('utf-8', { fatal: true });

export interface DeliveryJob {
  id: string;
  name: string;
  payload: JsonValue;
}

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
}): RequestHandler[] {
  const raw = express.raw({ type: () => true, limit: MAX_BODY_BYTES });
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
      throw new SvcError(
        'unauthorized',
        deps.secret === undefined
          ? 'Webhook deliveries are not accepted: WEBHOOK_SECRET is not configured'
          : 'Missing or invalid X-Hub-Signature-256',
      );
    }
    const payload = parseStrictJson(text);
    const id = req.headers['x-github-delivery'];
    const name = req.headers['x-github-event'];
    if (
      typeof id !== 'string' ||
      !/^[\w-]{1,128}$/.test(id) ||
      typeof name !== 'string' ||
      !/^[a-z_]{1,64}$/.test(name)
    ) {
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
    const { created } = await deps.queue.enqueue(DELIVERY_JOB, job as unknown as JsonValue, {
      dedupeKey: `github:${id}`,
    });
    deps.log.info({ delivery: id, event: name, action, duplicate: !created }, 'webhook accepted');
    res
      .status(202)
      .json({ accepted: true, delivery: id, status: created ? 'queued' : 'duplicate' });
  };
  return [raw, handle];
}

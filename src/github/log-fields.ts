import { clipText } from '../core/text.js';

// Log lines of the GitHub path carry bounded fields only: a delivery's payload (hundreds of KB,
// written by whoever opened the pull request) and an Octokit error's request and response
// never reach the log, whole or in part.
const MAX_FIELD = 200;
const MAX_MESSAGE = 500;
const MAX_ERRORS = 5;

const bounded = (value: unknown, max = MAX_FIELD): string | undefined =>
  typeof value === 'string' ? clipText(value, max, '…') : undefined;
const count = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isSafeInteger(value) ? value : undefined;
const member = (value: unknown, key: string): unknown =>
  typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;

/** Drops the members without a value, so that a line shows only what is known. */
const defined = (fields: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));

/**
 * What identifies a delivery in a log line: its id, event and action, the repository, the
 * installation and the pull request. Attacker-controlled payload: every string is capped.
 */
export function deliveryFields(delivery: {
  id: unknown;
  name: unknown;
  payload: unknown;
}): Record<string, unknown> {
  const { payload } = delivery;
  const repository = member(payload, 'repository');
  return defined({
    delivery: bounded(delivery.id),
    event: bounded(delivery.name),
    action: bounded(member(payload, 'action')),
    repository: bounded(member(repository, 'full_name')),
    installation: count(member(member(payload, 'installation'), 'id')),
    pull_request: count(
      member(member(payload, 'pull_request'), 'number') ?? member(payload, 'number'),
    ),
  });
}

const errorsOf = (error: unknown): unknown[] =>
  error instanceof AggregateError ? error.errors.flatMap(errorsOf) : [error];

const messageOf = (error: unknown): string =>
  error instanceof Error ? error.message : typeof error === 'string' ? error : String(error);

/** An error's message (capped, the messages of an AggregateError joined) and HTTP status. */
export function errorFields(error: unknown): { error: string; status?: number } {
  const errors = errorsOf(error);
  const message = errors.slice(0, MAX_ERRORS).map(messageOf).join('; ');
  const status = errors.map((e) => count(member(e, 'status'))).find((s) => s !== undefined);
  return defined({
    error: clipText(
      errors.length > MAX_ERRORS ? `${message}; and ${errors.length - MAX_ERRORS} more` : message,
      MAX_MESSAGE,
      '…',
    ),
    status,
  }) as { error: string; status?: number };
}

/**
 * pino's `err` serializer for the GitHub App's logger, Probot's included: the name, capped
 * message and status of an error, never its enumerable members. @octokit/webhooks attaches the
 * whole delivery to every handler error (`error.event`), and Octokit its request and response.
 */
export function boundedErr(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { message: clipText(String(error), MAX_MESSAGE, '…') };
  const { error: message, status } = errorFields(error);
  return defined({
    type: bounded(error.name),
    message,
    status,
    delivery: bounded(member(member(error, 'event'), 'id')),
  });
}

/**
 * pino's `event` serializer for the same logger: Probot logs each delivery it receives (at
 * debug) with the whole event; a line keeps what `deliveryFields` names. A plain event name
 * stays as it is.
 */
export function boundedEvent(event: unknown): unknown {
  if (typeof event === 'string') return bounded(event);
  if (typeof event !== 'object' || event === null) return event;
  const { id, name, payload } = event as Record<string, unknown>;
  return deliveryFields({ id, name, payload });
}

import { BodyError } from './read.js';
import type { HarnessName, HookEvent, ParseResult } from './types.js';

/**
 * Runs a harness's reader over the body, turning a BodyError into a validation error that
 * names the harness. A session start or end event also gets the harness's word for it: every
 * harness names it `source` at the start and `reason` at the end.
 */
export function parsed(
  harness: HarnessName,
  body: unknown,
  read: (body: unknown) => HookEvent,
): ParseResult {
  let event: HookEvent;
  try {
    event = read(body);
  } catch (error) {
    if (error instanceof BodyError) {
      return { ok: false, error: `${harness} hook event: ${error.message}` };
    }
    throw error;
  }
  if (event.kind === 'session_start' || event.kind === 'session_end') {
    const said = (body as Record<string, unknown>)[
      event.kind === 'session_start' ? 'source' : 'reason'
    ];
    if (typeof said === 'string' && said.length > 0 && said.length <= 64)
      event.session_reason = said;
  }
  return { ok: true, event };
}

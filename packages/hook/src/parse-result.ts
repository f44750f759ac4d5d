import { BodyError } from './read.js';
import type { HarnessName, HookEvent, ParseResult } from './types.js';

/** Runs a harness's reader, turning a BodyError into a validation error that names the harness. */
export function parsed(harness: HarnessName, read: () => HookEvent): ParseResult {
  try {
    return { ok: true, event: read() };
  } catch (error) {
    if (error instanceof BodyError) {
      return { ok: false, error: `${harness} hook event: ${error.message}` };
    }
    throw error;
  }
}

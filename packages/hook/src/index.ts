export type {
  Harness,
  HarnessName,
  HookAnswer,
  HookDecision,
  HookEvent,
  HookEventKind,
  ParseOptions,
  ParseResult,
} from './types.js';
export { HARNESS_NAMES } from './types.js';
export { HARNESSES, harnessOf, isHarnessName } from './harnesses/index.js';
export { EXIT_HEADER, MAX_REPOSITORY, REPOSITORY } from './protocol.js';

import { harnessOf } from './harnesses/index.js';
import type { HookAnswer, HookDecision, ParseOptions, ParseResult } from './types.js';

/** Reads a harness's hook event into the one shape svc uses. */
export function parseEvent(harness: string, body: unknown, options?: ParseOptions): ParseResult {
  return harnessOf(harness).parseEvent(body, options);
}

/** svc's decision as the harness expects it (contract §12, "Answers"). */
export function answer(harness: string, decision: HookDecision): HookAnswer {
  return harnessOf(harness).answer(decision);
}

/** Whether the harness can ask its operator at this pre-tool event. */
export function asks(harness: string, hookEvent: string | undefined): boolean {
  return harnessOf(harness).asks(hookEvent);
}

/** The answer to an event that asks nothing (post-tool, session start and end). */
export function acknowledge(harness: string): HookAnswer {
  return harnessOf(harness).acknowledge();
}

/** The harness's denial when no decision could be had. */
export function failClosed(harness: string, message: string): HookAnswer {
  return harnessOf(harness).failClosed(message);
}

/** Letting the call through without a decision, with a warning: only when configured. */
export function failOpen(harness: string, message: string): HookAnswer {
  return harnessOf(harness).failOpen(message);
}

import type { HookEventKind } from './types.js';
// Small readers for attacker-controlled hook bodies: this package has no dependencies, so no
// schema library. Each returns undefined or throws a BodyError naming the field.

/** A field of a hook body that is missing or of the wrong kind. */
export class BodyError extends Error {
  override name = 'BodyError';
}

/** Bounds on what a hook event may carry, so that a huge or hostile body stays harmless. */
export const LIMITS = { id: 256, name: 256, path: 4096, text: 256 } as const;

export type Json = Record<string, unknown>;

export function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function requireObject(value: unknown, what: string): Json {
  if (!isObject(value)) throw new BodyError(`${what} must be a JSON object`);
  return value;
}

/** A required non-empty string of at most `max` characters. */
export function str(body: Json, field: string, max: number): string {
  const value = body[field];
  if (typeof value !== 'string' || value.length === 0) {
    throw new BodyError(`${field} must be a non-empty string`);
  }
  if (value.length > max) throw new BodyError(`${field} is longer than ${max} characters`);
  return value;
}

/** An optional string (absent or null reads as undefined); any other kind is an error. */
export function optStr(body: Json, field: string, max: number): string | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new BodyError(`${field} must be a string`);
  if (value.length > max) throw new BodyError(`${field} is longer than ${max} characters`);
  return value.length > 0 ? value : undefined;
}

/** The first present string of several field names (payload formats that differ in case). */
export function firstStr(body: Json, fields: string[], max: number): string | undefined {
  for (const field of fields) {
    const value = optStr(body, field, max);
    if (value !== undefined) return value;
  }
  return undefined;
}

/** An optional integer. */
export function optInt(body: Json, field: string): number | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    throw new BodyError(`${field} must be an integer`);
  }
  return value;
}

/** A required field of any JSON kind (a tool's input), present even if null. */
export function present(body: Json, field: string): unknown {
  if (!(field in body) || body[field] === undefined) throw new BodyError(`${field} is missing`);
  return body[field];
}

/**
 * Arguments some harnesses send as a JSON string (Copilot's toolArgs, Cursor's MCP
 * tool_input): the input is the value the string encodes, so its digest does not depend on
 * the string's spacing. A string that is not JSON stays the string it is.
 */
export function decodedArgs(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const text = value.trim();
  if (!text.startsWith('{') && !text.startsWith('[')) return value;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return value;
  }
}

/** An MCP tool's name as svc's rules read it. */
export function mcpToolName(server: string, tool: string): string {
  return `mcp__${server}__${tool}`;
}

/**
 * The kind of a harness's event by its name: one of `kinds` (own names only: an event named
 * `constructor` is no kind), or `other`.
 */
export const kindIn = (
  kinds: Readonly<Record<string, HookEventKind>>,
  hookEvent: string,
): HookEventKind => (Object.hasOwn(kinds, hookEvent) ? kinds[hookEvent]! : 'other');

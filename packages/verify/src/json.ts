/** A JSON object as a parser returns it, still untrusted: its members are yet to be checked. */
export type JsonObject = Record<string, unknown>;

/** Whether a parsed JSON value is an object (not null, not an array): the first test of any input. */
export const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

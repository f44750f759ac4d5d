import { z } from 'zod';
import { formatIssues } from '../core/claim-schema.js';
import { SvcError } from '../core/errors.js';

/** Validates attacker-controlled input; failures are 400s naming `<field>: <constraint>`. */
export function validate<T extends z.ZodType>(schema: T, value: unknown): z.infer<T> {
  const result = schema.safeParse(value);
  if (!result.success) throw new SvcError('validation_failed', formatIssues(result.error));
  return result.data;
}

/**
 * A query string is validated like a body, except that the message names the parameter at
 * fault also when it is unknown or repeated (a repeated one arrives as an array, which would
 * otherwise read as an unrelated type error).
 */
export function validateQuery<T extends z.ZodType>(schema: T, query: unknown): z.infer<T> {
  const params = (query ?? {}) as Record<string, unknown>;
  const repeated = Object.keys(params).filter((name) => Array.isArray(params[name]));
  if (repeated.length > 0) {
    throw new SvcError(
      'validation_failed',
      repeated.map((name) => `${name}: must be given at most once`).join('; '),
    );
  }
  const result = schema.safeParse(params);
  if (result.success) return result.data;
  const issues = result.error.issues.flatMap((issue): z.core.$ZodIssue[] =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((name) => ({
          ...issue,
          path: [...issue.path, name],
          message: 'unknown parameter',
        }))
      : [issue],
  );
  throw new SvcError('validation_failed', formatIssues(new z.ZodError(issues)));
}

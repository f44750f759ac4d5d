import type { z } from 'zod';
import { formatIssues } from '../core/claim-schema.js';
import { SvcError } from '../core/errors.js';

/** Validates attacker-controlled input; failures are 400s naming `<field>: <constraint>`. */
export function validate<T extends z.ZodType>(schema: T, value: unknown): z.infer<T> {
  const result = schema.safeParse(value);
  if (!result.success) throw new SvcError('validation_failed', formatIssues(result.error));
  return result.data;
}

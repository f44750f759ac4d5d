import { z } from 'zod';

/**
 * An account's e-mail address as svc accepts it, at signup and in `svc keys create`: surrounding
 * white space is not part of it (the key lookup ignores it too), and it must be an address.
 */
export const emailSchema = z
  .string()
  .trim()
  .pipe(z.email({ error: 'must be an e-mail address' }).max(254));

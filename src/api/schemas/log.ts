import { z } from 'zod';

// z.coerce.number accepts "", " 1" and "1e3"; a tree size is written in plain decimal digits.
const treeSize = (description: string) =>
  z
    .string()
    .regex(/^(?:0|[1-9][0-9]{0,15})$/, { error: 'must be a tree size in decimal digits' })
    .transform(Number)
    .refine(Number.isSafeInteger, { error: 'must be a tree size in decimal digits' })
    .meta({ description });

export const checkpointQuery = z.strictObject({
  size: treeSize('The stored checkpoint of this tree size (404 when none was made).').optional(),
});

export const proofQuery = z.strictObject({
  size: treeSize(
    'Prove inclusion in the tree of this size (default: the newest checkpoint). Its checkpoint is returned when one of that size was made.',
  ).optional(),
  format: z.enum(['json', 'tlog-proof']).optional().meta({
    description:
      'tlog-proof answers the C2SP tlog-proof@v1 text (as Accept: text/x-tlog-proof does); json, the default, the JSON proof.',
  }),
});

export const consistencyQuery = z.strictObject({
  from: treeSize('The smaller tree size.'),
  to: treeSize('The larger tree size, at most the current one.'),
});

export const tileParams = z.strictObject({
  path: z
    .array(z.string().max(16))
    .max(8)
    .meta({ description: 'The tile path after tile/, as C2SP tlog-tiles writes it.' }),
});

/** One OpenAPI path template of a wildcard route, with its own operation and parameters. */
export interface DocumentedPath {
  path: string;
  operationId: string;
  summary: string;
  params: z.ZodObject<z.ZodRawShape>;
}

// How many `x`-prefixed groups of a tile index are documented: with two, indexes below 10^9,
// that is trees of up to 256 billion leaves. Deeper ones are served the same way.
const INDEX_GROUPS = 2;

const groupParam = (n: number) =>
  z
    .string()
    .regex(/^\d{3}$/)
    .meta({
      description: `Digits ${n * 3 + 1} to ${n * 3 + 3} from the end of the tile index N, zero-padded (the path element is x and these digits).`,
    });

/**
 * The tile paths of C2SP tlog-tiles as OpenAPI path templates. OpenAPI path parameters never
 * span a "/", and a tile path has a variable number of elements (`<N>` is written in groups of
 * three digits, all but the last prefixed with `x`, then `.p/<W>` for a partial tile), so the
 * wildcard route is documented as one template per shape: a client (or Prism) fills each
 * element and sends the path the service serves. `kind` is `hash` (tile/<L>/<N>) or `entries`
 * (tile/entries/<N>).
 */
export function tilePathTemplates(kind: 'hash' | 'entries'): DocumentedPath[] {
  const base = kind === 'hash' ? '/v1/log/tile/{level}' : '/v1/log/tile/entries';
  const name = kind === 'hash' ? 'Tile' : 'EntryBundle';
  const what = kind === 'hash' ? 'A hash tile' : 'An entry bundle';
  const level = z
    .string()
    .regex(/^(?:[0-9]|[1-5][0-9]|6[0-3])$/)
    .meta({ description: 'The tile level L: hashes of tree level 8·L.' });
  const index = z
    .string()
    .regex(/^\d{3}$/)
    .meta({ description: 'The last three digits of the tile index N, zero-padded.' });
  const width = z
    .string()
    .regex(/^(?:[1-9]|[1-9]\d|1\d\d|2[0-4]\d|25[0-5])$/)
    .meta({ description: 'The width W of a partial tile: 1 to 255 entries.' });
  const paths: DocumentedPath[] = [];
  for (let groups = 0; groups <= INDEX_GROUPS; groups++) {
    const names = Array.from({ length: groups }, (_, i) => `group${groups - i}`);
    const prefix = names.map((n) => `/x{${n}}`).join('');
    const shape: z.ZodRawShape = {
      ...(kind === 'hash' ? { level } : {}),
      ...Object.fromEntries(names.map((n) => [n, groupParam(Number(n.slice(5)))])),
      index,
    };
    const suffix = groups === 0 ? '' : `X${groups}`;
    const ofIndex =
      groups === 0 ? 'below 1000' : `of ${groups * 3 + 1} to ${groups * 3 + 3} digits`;
    paths.push(
      {
        path: `${base}${prefix}/{index}`,
        operationId: `get${name}${suffix}`,
        summary: `${what} of the log, index ${ofIndex} (C2SP tlog-tiles)`,
        params: z.strictObject(shape),
      },
      {
        path: `${base}${prefix}/{index}.p/{width}`,
        operationId: `getPartial${name}${suffix}`,
        summary: `${what} of the log, partial, index ${ofIndex} (C2SP tlog-tiles)`,
        params: z.strictObject({ ...shape, width }),
      },
    );
  }
  return paths;
}

const base64Hash = z.string().meta({ description: 'A SHA-256 hash, base64.' });

export const inclusionSchema = z
  .object({
    leaf_index: z.number().int().meta({ description: 'chain.sequence - 1.' }),
    tree_size: z.number().int(),
    leaf_hash: base64Hash,
    inclusion: z.array(base64Hash).meta({ description: 'RFC 9162 inclusion proof.' }),
    checkpoint: z
      .string()
      .nullable()
      .meta({ description: 'The signed checkpoint of tree_size (C2SP signed note), if made.' }),
  })
  .meta({ id: 'InclusionProof' });

export const consistencySchema = z
  .object({
    from: z.number().int(),
    to: z.number().int(),
    proof: z.array(base64Hash).meta({ description: 'RFC 9162 consistency proof.' }),
  })
  .meta({ id: 'ConsistencyProof' });

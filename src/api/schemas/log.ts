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

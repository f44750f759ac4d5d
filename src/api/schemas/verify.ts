import { z } from 'zod';
import { CHECK_NAMES, fromBase64, MAX_CHECKPOINT_CHARS, MAX_INCLUSION_HASHES } from '@svc/verify';
import { signedPositionSchema, submitterSchema } from '../../core/receipt-schema.js';

const receiptToVerifySchema = z
  .looseObject({}, { error: 'expected a receipt object, as returned under "receipt" by evaluate' })
  .meta({
    id: 'ReceiptToVerify',
    description:
      'A receipt exactly as evaluate returned it under "receipt". Any JSON object is checked; problems are FAIL checks.',
  });

const proofHashSchema = z
  .string()
  .max(64)
  .refine((text) => fromBase64(text)?.length === 32, {
    error: 'must be the standard base64 of a 32-byte hash',
  });

export const inclusionProofSchema = z
  .strictObject(
    {
      leaf_index: z.int().min(0),
      tree_size: z.int().min(1),
      inclusion: z
        .array(proofHashSchema)
        .max(MAX_INCLUSION_HASHES)
        .meta({ description: 'The RFC 9162 inclusion proof, standard base64 hashes.' }),
      checkpoint: z
        .string()
        .min(1)
        .max(MAX_CHECKPOINT_CHARS)
        .nullable()
        .meta({ description: 'The signed checkpoint of tree_size (a C2SP signed note).' }),
      leaf_hash: proofHashSchema
        .optional()
        .meta({ description: "Optional; when given it must be the receipt's leaf hash." }),
    },
    { error: 'a proof has leaf_index, tree_size, inclusion, checkpoint and leaf_hash only' },
  )
  .meta({
    id: 'InclusionProofToVerify',
    description: 'An answer of GET /v1/receipts/{id}/proof, as served.',
  });

const verifyWithProofSchema = z
  .strictObject(
    {
      receipt: receiptToVerifySchema,
      proof: inclusionProofSchema.optional(),
    },
    { error: 'a verify request is a receipt, or {receipt, proof}' },
  )
  .meta({
    id: 'ReceiptWithProof',
    description:
      'A receipt and, optionally, its inclusion proof. Without proof, the ledger makes one from its newest checkpoint.',
  });

/**
 * The wrapped form `{receipt, proof?}`: an object with a `receipt` member and no
 * `signed_fields` (which every receipt declares, and no receipt has a `receipt` member).
 */
export const isReceiptWithProof = (body: object): body is z.infer<typeof verifyWithProofSchema> =>
  Object.hasOwn(body, 'receipt') && !Object.hasOwn(body, 'signed_fields');

export const verifyRequestSchema = z
  .union([verifyWithProofSchema, receiptToVerifySchema], {
    error: 'expected a receipt object, as returned under "receipt" by evaluate',
  })
  .superRefine((body, ctx) => {
    // A wrapped body that does not fit the wrapped form is a 400, not a receipt to check.
    if (!isReceiptWithProof(body)) return;
    const wrapped = verifyWithProofSchema.safeParse(body);
    if (!wrapped.success) for (const issue of wrapped.error.issues) ctx.addIssue({ ...issue });
  })
  .meta({
    description:
      'A receipt as evaluate returned it, or {receipt, proof?} to check the receipt with an inclusion proof.',
  });

export const verifyResponseSchema = z
  .object({
    valid: z.boolean(),
    receipt_id: z.string().nullable(),
    admissibility: z.string().nullable(),
    verification_depth: z.literal('cryptographic'),
    checks: z.array(
      z.object({
        name: z.enum(CHECK_NAMES),
        layer: z.enum(['structural', 'cryptographic', 'ledger']),
        status: z.enum(['PASS', 'FAIL', 'UNVERIFIED', 'SKIPPED']),
        detail: z.string().optional(),
      }),
    ),
    signed: z
      .object({
        contract: z.string(),
        submitter: submitterSchema.nullable(),
        policy: z
          .object({ name: z.string(), config_hash: z.string(), overrides: z.boolean() })
          .nullable(),
        position: signedPositionSchema.nullable(),
      })
      .nullable()
      .meta({
        description:
          'What the key signed about who asked, under which policy and where in the ledger (null members for receipt-core-v1); null when the signature did not verify.',
      }),
    fork_evidence: z
      .object({
        size: z.number().int(),
        checkpoint_root: z.string().meta({ description: 'The root the checkpoint signs, base64.' }),
        ledger_root: z
          .string()
          .meta({ description: "The ledger's own root of that size, base64." }),
        signed_by: z.array(z.string()).meta({
          description: "Key ids of the ledger's key history whose signatures on it verify.",
        }),
        checkpoint: z.string().meta({ description: 'The presented checkpoint, as given.' }),
      })
      .optional()
      .meta({
        description:
          "Present only when the proof given carries a checkpoint signed by a key of the ledger's key history (current at that size) for a size the ledger holds, with another root than the ledger's: the log signed two different trees of one size. Keep it: it is signed evidence of a fork. valid is then false and the inclusion check FAILs.",
      }),
  })
  .meta({ id: 'VerifyResponse' });

export const verifyQuerySchema = z.object({
  expect_policy: z
    .string()
    .max(64)
    .optional()
    .meta({ description: 'The policy name the receipt must be signed under (policy_binding).' }),
  expect_config_hash: z
    .string()
    .regex(/^sha256:[0-9a-f]{64}$/, { error: 'must be "sha256:" + 64 lowercase hex digits' })
    .optional()
    .meta({ description: 'The policy.config_hash the receipt must carry.' }),
  expect_submitter: z.string().max(128).optional().meta({
    description: 'The submitter: a key_id (kid_…) or github_app:<app_id>:<installation_id>.',
  }),
});

/** Headers of GET /v1/keys/server beyond the common ones. */
export const serverKeyHeaders = z.object({
  'X-Svc-Key-Id': z.string().meta({
    description:
      'Fingerprint of the key (what receipts carry as attestations[].key_id); compare it with one obtained through a trusted channel.',
  }),
});

const keyTransitionSchema = z
  .object({
    statement: z.object({
      type: z.literal('svc-key-transition-v1'),
      log: z.string(),
      previous_key_id: z.string(),
      new_key_id: z.string(),
      new_public_key: z.string().meta({ description: 'The new key, base64 of its raw 32 bytes.' }),
      first_sequence: z.int(),
      issued_at: z.string(),
    }),
    signature: z.string().meta({
      description:
        'Ed25519 signature (base64) by the previous key over the UTF-8 bytes of the RFC 8785 canonical form of statement.',
    }),
  })
  .meta({ id: 'KeyTransition' });

const keyRevocationSchema = z
  .object({
    statement: z.object({
      type: z.literal('svc-key-revocation-v1'),
      log: z.string(),
      key_id: z.string().meta({ description: 'The revoked key.' }),
      revoked_from_sequence: z.int(),
      signer_key_id: z.string().meta({ description: 'The key that signs the statement.' }),
      issued_at: z.string(),
    }),
    signature: z.string().meta({
      description:
        'Ed25519 signature (base64) by signer_key_id over the UTF-8 bytes of the RFC 8785 canonical form of statement.',
    }),
  })
  .meta({ id: 'KeyRevocation' });

export const signingKeySchema = z
  .object({
    key_id: z.string().meta({ description: 'attestations[].key_id: sha256 of the SPKI DER.' }),
    public_key_pem: z.string().nullable().meta({
      description:
        'SPKI PEM; null for a key adopted from receipts signed before the history was kept.',
    }),
    verifier_key: z
      .string()
      .nullable()
      .meta({ description: 'Signed-note verifier key: <origin>+<key ID>+<base64(0x01‖key)>.' }),
    status: z.enum(['current', 'retired', 'revoked']),
    first_sequence: z.int(),
    last_sequence: z.int().nullable().meta({ description: 'Null while the key is current.' }),
    activated_at: z.string(),
    retired_at: z.string().nullable(),
    revoked_from_sequence: z.int().nullable().meta({
      description: 'Receipts of this key at or after this sequence fail verification.',
    }),
    revoked_at: z.string().nullable(),
    transition: keyTransitionSchema
      .nullable()
      .meta({ description: 'The statement introducing this key, signed by the one before it.' }),
    revocation: keyRevocationSchema.nullable().meta({
      description:
        'The statement revoking this key, signed by the newest key when it was revoked; null unless revoked (or revoked before revocations were signed).',
    }),
  })
  .meta({ id: 'SigningKey' });

export const keyHistoryResponseSchema = z
  .object({
    origin: z.string().meta({ description: 'The log origin the transitions name.' }),
    keys: z.array(signingKeySchema).meta({ description: 'Every key, by first_sequence.' }),
  })
  .meta({ id: 'KeyHistory' });

import { z } from 'zod';

/** A DSSE envelope (DSSE v1.0 envelope.md) as svc serves it (contract §14). */
export const dsseEnvelopeSchema = z
  .object({
    payloadType: z.string().meta({ description: 'application/vnd.in-toto+json' }),
    payload: z.string().meta({
      description:
        'Base64 of the in-toto Statement v1 (canonical JSON) with the SLSA VSA v1 predicate.',
    }),
    signatures: z.array(
      z.object({
        keyid: z.string().meta({ description: "The signing key's key_id (contract §9)." }),
        sig: z.string().meta({ description: 'Base64 of the Ed25519 signature over PAE.' }),
      }),
    ),
  })
  .meta({ id: 'DsseEnvelope' });

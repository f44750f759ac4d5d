import { Router } from 'express';
import { claimInputSchema } from '../../core/claim-schema.js';
import type { ClaimService } from '../../services/claims.js';
import { requireKey } from '../middleware/rate-limit.js';
import { validate } from '../validate.js';

export function claimsRouter(claims: ClaimService): Router {
  const router = Router();
  router.post('/v1/evaluate', requireKey, async (req, res) => {
    const claim = validate(claimInputSchema, req.body);
    const { response, replayed } = await claims.evaluate(claim, {
      apiKeyId: res.locals.apiKey!.id,
    });
    if (replayed) res.setHeader('Idempotent-Replay', 'true');
    res.status(200).json(response);
  });
  router.post('/v1/simulate', requireKey, (req, res) => {
    res.status(200).json(claims.simulate(validate(claimInputSchema, req.body)));
  });
  return router;
}

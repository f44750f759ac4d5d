import { Router } from 'express';
import { SvcError } from '../../core/errors.js';
import type { LedgerStore } from '../../ports/ledger-store.js';
import type { ServerKey } from '../../ports/signer.js';
import { verifyAgainstLedger } from '../../services/verification.js';

export function verifyRouter(deps: { ledger: LedgerStore; serverKey: ServerKey }): Router {
  const router = Router();
  router.post('/v1/verify', async (req, res) => {
    // Anything that is an object gets the layered checks (a broken receipt is a FAIL, not a
    // 400); only a body that cannot be a receipt at all is refused.
    if (typeof req.body !== 'object' || req.body === null || Array.isArray(req.body)) {
      throw new SvcError(
        'validation_failed',
        '(root): expected a receipt object, as returned under "receipt" by evaluate',
      );
    }
    res.json(await verifyAgainstLedger(req.body, deps));
  });
  return router;
}

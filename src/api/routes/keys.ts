import { Router } from 'express';
import type { ServerKey } from '../../ports/signer.js';

export function keysRouter(serverKey: ServerKey): Router {
  const router = Router();
  router.get('/v1/keys/server', (_req, res) => {
    // The fingerprint travels beside the key so it can be compared with one obtained out of
    // band; a key fetched from the service alone proves nothing about who holds it.
    res.setHeader('X-Svc-Key-Id', serverKey.keyId);
    res.type('text/plain').send(serverKey.publicKeyPem);
  });
  return router;
}

import { join } from 'node:path';
import { Router, type Request, type Response } from 'express';
// The path helper alone: the package's main module loads Swagger UI's whole bundle into
// the server (about 10 MB of heap) only to tell where its files are.
import getAbsoluteFSPath from 'swagger-ui-dist/absolute-path.js';

const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css',
  'swagger-ui-bundle.js': 'application/javascript',
};

// Served from the installed swagger-ui-dist package: the page works without any CDN.
const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>svc API</title>
  <link rel="stylesheet" href="/docs/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/swagger-ui-bundle.js"></script>
  <script src="/docs/svc-docs.js"></script>
</body>
</html>
`;

// validatorUrl null: Swagger UI would otherwise load a badge from an external validator.
const INIT = `window.ui = SwaggerUIBundle({ url: '/v1/openapi.json', dom_id: '#swagger-ui', deepLinking: true, validatorUrl: null });\n`;

export function docsRouter(): Router {
  const router = Router();
  const page = (_req: Request, res: Response) => void res.type('html').send(PAGE);
  router.get('/docs', page);
  router.get(
    '/docs/svc-docs.js',
    (_req, res) => void res.type('application/javascript').send(INIT),
  );
  const root = getAbsoluteFSPath();
  for (const [file, type] of Object.entries(ASSETS)) {
    router.get(`/docs/${file}`, (_req, res) =>
      res.type(type).sendFile(join(root, file), { maxAge: '1h' }),
    );
  }
  return router;
}

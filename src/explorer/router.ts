import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import {
  Router,
  type ErrorRequestHandler,
  type Request,
  type RequestHandler,
  type Response,
} from 'express';
import { STATUS_OF } from '../api/middleware/errors.js';
import { diffQuery, receiptParams, searchQuery } from '../api/schemas/ledger.js';
import { sessionParams, sessionRecordsQuery } from '../api/schemas/sessions.js';
import { validate, validateQuery } from '../api/validate.js';
import { z } from 'zod';
import { sequenceCursor } from '../api/schemas/common.js';
import { isSvcError, SvcError } from '../core/errors.js';
import { listFilterOf } from './data.js';
import { DEPLOYMENTS_PATH } from './format.js';
import { html } from './html.js';
import {
  layout,
  privateShell,
  SCRIPT_PATH,
  STYLE_PATH,
  type PageName,
  type PageView,
} from './layout.js';
import {
  loadDeployment,
  loadDeployments,
  loadKeys,
  loadList,
  loadOverview,
  loadReceipt,
  type ExplorerSources,
} from './loaders.js';
import { renderDeployment, renderDeployments } from './pages/deployment.js';
import { renderKeys } from './pages/keys.js';
import { renderOverview } from './pages/overview.js';
import { renderPullRequest } from './pages/pull-request.js';
import { renderReceiptList } from './pages/receipt-list.js';
import { renderReceipt } from './pages/receipt.js';
import { renderSession } from './pages/session.js';
import { EXPLORER_CSS } from './styles.js';

/** Where `npm run build` writes the browser bundle (dist/explorer/explorer.js). */
export const DEFAULT_CLIENT_SCRIPT = fileURLToPath(
  new URL('../../explorer/explorer.js', import.meta.url),
);

export interface ExplorerOptions extends ExplorerSources {
  publicReads: boolean;
  /** The built browser bundle; default DEFAULT_CLIENT_SCRIPT. */
  clientScript?: string;
}

const send = (res: Response, page: PageName, isPrivate: boolean, view: PageView, status = 200) =>
  void res
    .status(status)
    .type('html')
    // Pages show ledger data: no shared cache keeps a private answer.
    .set('Cache-Control', 'no-store')
    .send(layout({ page, private: isPrivate }, view).text);

const part = (what: string, max: number) =>
  z.string().min(1, { error: 'must not be empty' }).max(max).meta({ description: what });

/** An environment's page: the repository as owner and name, and the environment's name. */
const deploymentParams = z.strictObject({
  owner: part('The repository’s owner.', 512),
  repo: part('The repository’s name.', 511),
  environment: part('The environment, as the deployment claims name it.', 255),
});

/** An environment's page continues after a sequence, as the search route's cursor does. */
const deploymentPageQuery = z.strictObject({ after: sequenceCursor });

const searchOf = (req: Request) => new URLSearchParams(req.originalUrl.split('?')[1] ?? '');

/**
 * The ledger explorer: server-rendered pages over the services the JSON API uses. With private
 * reads the pages are shells: a browser cannot send a key with a navigation, so the page's
 * script asks for one and reads the JSON API with it (docs/EXPLORER.md).
 */
export function explorerRouter(options: ExplorerOptions): Router {
  const router = Router();
  const isPrivate = !options.publicReads;
  // The metrics label of the page: its route template, as the API's routes have.
  const label: RequestHandler = (req, res, next) => {
    res.locals.route = String(req.route?.path ?? req.path);
    next();
  };
  /** A page: rendered from the services with public reads, else the key shell. */
  const page = (name: PageName, title: string, render: (req: Request) => Promise<PageView>) =>
    [
      label,
      async (req: Request, res: Response) =>
        send(res, name, isPrivate, isPrivate ? privateShell(title) : await render(req)),
    ] as RequestHandler[];

  router.get('/', (_req, res) => res.redirect(302, '/explorer'));
  router.get(
    '/explorer',
    ...page('overview', 'Ledger overview', async () =>
      renderOverview(await loadOverview(options, undefined)),
    ),
  );
  router.get(
    '/explorer/receipts',
    ...page('receipts', 'Receipts', async (req) => {
      const filter = listFilterOf(searchOf(req));
      const query = validateQuery(searchQuery, { ...filter });
      return renderReceiptList(await loadList(options, filter, query, undefined));
    }),
  );
  router.get(
    '/explorer/receipts/:id',
    ...page('receipt', 'Receipt', async (req) => {
      const { id } = validate(receiptParams, req.params);
      return renderReceipt(await loadReceipt(options, id, undefined));
    }),
  );
  router.get(
    '/explorer/sessions/:id',
    ...page('session', 'Agent session', async (req) => {
      const { id } = validate(sessionParams, req.params);
      const query = validateQuery(sessionRecordsQuery, {
        after: searchOf(req).get('after') ?? undefined,
      });
      return renderSession(await options.sessions.session(id, query, undefined));
    }),
  );
  router.get(
    DEPLOYMENTS_PATH,
    ...page('deployments', 'Deployments', async () =>
      renderDeployments(await loadDeployments(options, undefined)),
    ),
  );
  router.get(
    `${DEPLOYMENTS_PATH}/:owner/:repo/:environment`,
    ...page('deployment', 'Deployments of an environment', async (req) => {
      const { owner, repo, environment } = validate(deploymentParams, req.params);
      const { after } = validateQuery(deploymentPageQuery, {
        after: searchOf(req).get('after') ?? undefined,
      });
      return renderDeployment(
        await loadDeployment(
          options,
          { repository: `${owner}/${repo}`, environment, after },
          undefined,
        ),
      );
    }),
  );
  router.get(
    '/explorer/pulls',
    ...page('pull', 'Pull request', async (req) => {
      const search = searchOf(req);
      const query = validateQuery(diffQuery, {
        repository: search.get('repository') ?? '',
        pr: search.get('pr') ?? '',
      });
      return renderPullRequest(await options.reads.diff(query.repository, query.pr, undefined));
    }),
  );
  // Keys, checkpoints and witnesses are public whatever the reads: rendered in both modes.
  router.get('/explorer/keys', label, async (_req, res) =>
    send(res, 'keys', isPrivate, renderKeys(await loadKeys(options))),
  );
  router.get(
    STYLE_PATH,
    label,
    (_req, res) =>
      void res.type('text/css').set('Cache-Control', 'public, max-age=300').send(EXPLORER_CSS),
  );
  const script = options.clientScript ?? DEFAULT_CLIENT_SCRIPT;
  let bundle: Promise<string> | undefined;
  router.get(SCRIPT_PATH, label, async (_req, res) => {
    bundle ??= readFile(script, 'utf8');
    let text: string;
    try {
      text = await bundle;
    } catch (error) {
      bundle = undefined;
      throw new SvcError('unavailable', 'The explorer’s script is not built: run npm run build', {
        cause: error,
      });
    }
    res.type('application/javascript').set('Cache-Control', 'public, max-age=300').send(text);
  });
  router.use('/explorer', explorerErrors);
  return router;
}

/**
 * The errors of the pages as pages: the status, message, code and request id the JSON error
 * answer carries, in HTML a reader can act on. The assets keep the JSON answer.
 */
const explorerErrors: ErrorRequestHandler = (error: unknown, req, res, next) => {
  if (!isSvcError(error) || req.path.startsWith('/assets/') || res.headersSent) return next(error);
  const status = STATUS_OF[error.code];
  const title = status === 404 ? 'Not found' : status === 400 ? 'Bad request' : 'Error';
  send(
    res.set(error.headers),
    'overview',
    false,
    {
      title,
      body: html`<h1 id="page-title">${title}</h1>
        <p class="notice" role="alert">${error.message}</p>
        <dl class="facts">
          <dt>Code</dt>
          <dd><code>${error.code}</code></dd>
          <dt>Request id</dt>
          <dd><code>${String(req.id)}</code></dd>
        </dl>
        <p><a href="/explorer">Back to the overview</a></p>`,
    },
    status,
  );
};

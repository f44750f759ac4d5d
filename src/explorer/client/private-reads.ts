import {
  DEPLOYMENT_PAGE_SIZE,
  DEPLOYMENTS_SCANNED,
  listFilterOf,
  MERGE_SOURCES_READ,
  mergeSourcesOf,
  type Agents,
  type DeploymentData,
  type DeploymentsData,
  type MergeEvidence,
  type LedgerPage,
  type Overview,
  type PullRequestDiff,
  type ReceiptResponse,
  type Repositories,
  type SearchPage,
  type SessionDetail,
  type Timeline,
} from '../data.js';
import { html, queryString } from '../html.js';
import type { PageView } from '../layout.js';
import { renderDeployment, renderDeployments } from '../pages/deployment.js';
import { renderOverview } from '../pages/overview.js';
import { renderPullRequest } from '../pages/pull-request.js';
import { renderReceiptList } from '../pages/receipt-list.js';
import { renderReceipt } from '../pages/receipt.js';
import { renderSession } from '../pages/session.js';
import {
  ApiError,
  downloadWithKey,
  forgetKey,
  getJson,
  getOptional,
  storedKey,
  storeKey,
} from './api.js';
import { setUpDecidePanel } from './decide-panel.js';
import { setUpVerifyPanel } from './verify-panel.js';

// Private reads: the server cannot see this tab's key, so the page is drawn here, by the
// renderers the server uses, from the JSON API read with the key.

const LIST_PAGE_SIZE = 50;

async function load(page: string): Promise<PageView | null> {
  const search = new URLSearchParams(location.search);
  switch (page) {
    case 'overview':
      return renderOverview({
        overview: await getJson<Overview>('/v1/overview'),
        timeline: await getJson<Timeline>('/v1/receipts/timeline'),
        repositories: await getJson<Repositories>('/v1/repos?limit=10'),
        agents: await getJson<Agents>('/v1/agents?limit=10'),
        checkpoint: await getOptional('/v1/log/checkpoint'),
      });
    case 'receipts': {
      const filter = listFilterOf(search);
      const query = queryString({ ...filter, limit: LIST_PAGE_SIZE, include: 'claims' });
      return renderReceiptList({
        filter,
        page: await getJson<SearchPage>(`/v1/receipts/search${query}`),
      });
    }
    case 'receipt': {
      const id = decodeURIComponent(location.pathname.split('/').pop() ?? '');
      const response = await getJson<ReceiptResponse>(`/v1/receipts/${encodeURIComponent(id)}`);
      const sequence = response.receipt.chain.sequence;
      const around = await getJson<LedgerPage>(
        `/v1/ledger${queryString({ after: sequence > 2 ? sequence - 2 : undefined, limit: 3 })}`,
      );
      const at = (n: number) => {
        const r = around.receipts.find((x) => x.chain.sequence === n);
        return r ? { receipt_id: r.receipt_id, sequence: n } : null;
      };
      const decided =
        response.decision.verdict === 'ESCALATED'
          ? await getOptional(`/v1/receipts/${encodeURIComponent(id)}/disposition`)
          : null;
      return renderReceipt({
        response,
        previous: at(sequence - 1),
        next: at(sequence + 1),
        head: around.head.sequence,
        disposition: decided === null ? null : (JSON.parse(decided) as ReceiptResponse),
        mergeReceipts: await mergeReceiptsOf(response),
      });
    }
    case 'session': {
      const id = decodeURIComponent(location.pathname.split('/').pop() ?? '');
      return renderSession(
        await getJson<SessionDetail>(
          `/v1/sessions/${encodeURIComponent(id)}${queryString({ after: search.get('after') })}`,
        ),
      );
    }
    case 'deployments':
      return renderDeployments({
        page: await getJson<DeploymentsData['page']>(
          `/v1/receipts/search${queryString({ action_type: 'deployment', limit: DEPLOYMENTS_SCANNED })}`,
        ),
      });
    case 'deployment': {
      // /explorer/deployments/:owner/:repo/:environment, each part encoded.
      const [owner = '', repo = '', environment = ''] = location.pathname
        .split('/')
        .slice(3)
        .map(decodeURIComponent);
      const repository = `${owner}/${repo}`;
      const query = queryString({
        repo: repository,
        action_type: 'deployment',
        environment,
        after: search.get('after'),
        limit: DEPLOYMENT_PAGE_SIZE,
        include: 'claims',
      });
      return renderDeployment({
        repository,
        environment,
        page: await getJson<DeploymentData['page']>(`/v1/receipts/search${query}`),
      });
    }
    case 'pull':
      return renderPullRequest(
        await getJson<PullRequestDiff>(
          `/v1/receipts/diff${queryString({ repository: search.get('repository'), pr: search.get('pr') })}`,
        ),
      );
    default:
      return null;
  }
}

/** A deployment receipt's merge receipts, as the server's loader reads them. */
async function mergeReceiptsOf(response: ReceiptResponse): Promise<MergeEvidence[]> {
  const sources = mergeSourcesOf(response.claim).slice(0, MERGE_SOURCES_READ);
  return Promise.all(
    sources.map(async (source) => {
      const text =
        source.receipt_id === null
          ? null
          : await getOptional(`/v1/receipts/${encodeURIComponent(source.receipt_id)}`);
      const merge = text === null ? null : (JSON.parse(text) as ReceiptResponse).receipt;
      return {
        ...source,
        receipt: merge
          ? { verdict: merge.policy.verdict, admissibility: merge.admissibility.status }
          : null,
      };
    }),
  );
}

/** Draws the page with the stored key; on a refused key, forgets it and asks again. */
async function show(page: string, main: HTMLElement, status: HTMLElement): Promise<void> {
  status.textContent = 'Reading the ledger with your key…';
  let view: PageView | null;
  try {
    view = await load(page);
  } catch (error) {
    if (error instanceof ApiError && (error.status === 401 || error.status === 403)) forgetKey();
    status.textContent =
      error instanceof ApiError
        ? `${error.message} (${error.code ?? `HTTP ${error.status}`})`
        : `The page could not be read: ${String(error)}`;
    return;
  }
  if (!view) return;
  document.title = `${view.title} · svc ledger explorer`;
  main.innerHTML = html`${view.body}
    <form id="forget-key" class="key-form">
      <p>
        Shown with the API key kept in this tab.
        <button type="submit" class="secondary">Forget the key</button>
      </p>
    </form>`.text;
  main.querySelector('#forget-key')?.addEventListener('submit', (event) => {
    event.preventDefault();
    forgetKey();
    location.reload();
  });
  setUpVerifyPanel(main);
  setUpDecidePanel(main);
  for (const link of main.querySelectorAll<HTMLAnchorElement>('a[data-keyed-download]')) {
    link.addEventListener('click', (event) => {
      event.preventDefault();
      const url = new URL(link.href);
      void downloadWithKey(url.pathname + url.search, link.download).catch((error: unknown) => {
        status.textContent = `The download failed: ${String(error)}`;
      });
    });
  }
}

export function setUpPrivateReads(page: string): void {
  const main = document.querySelector<HTMLElement>('main');
  const form = document.querySelector<HTMLFormElement>('#key-form');
  const status = document.querySelector<HTMLElement>('#key-status');
  if (!main || !form || !status) return;
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const input = form.querySelector<HTMLInputElement>('#api-key');
    const key = input?.value.trim() ?? '';
    if (!key) return;
    storeKey(key);
    void show(page, main, status);
  });
  if (storedKey()) void show(page, main, status);
}

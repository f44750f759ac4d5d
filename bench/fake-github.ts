import { generateKeyPairSync } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sign } from '@octokit/webhooks-methods';
import { LOOPBACK } from './processes.js';

/**
 * Just enough of GitHub's REST API, on the loopback address, for the service's GitHub App to
 * gate a bot's pull request: an installation token, the pull request and its files, no
 * reviews, no CI, no .github/svc.yml (the defaults apply), and the check run it writes. The
 * service reaches it as GitHub Enterprise Server (GHE_HOST, GHE_PROTOCOL=http). The
 * integration tests' fake (test/integration/github/fake-github.ts) answers in process through
 * nock, which cannot reach a spawned service.
 */

export const APP_ID = 4242;
export const INSTALLATION = 777;
export const OWNER = 'acme';
export const REPO = 'web';
export const BOT = 'soak-agent[bot]';

export interface FakeGitHub {
  /** host:port, for GHE_HOST. */
  host: string;
  /** The App's private key (PKCS#8 PEM), for PRIVATE_KEY. */
  appKey: string;
  /** Check runs the App created and updated. */
  readonly checkRunWrites: () => number;
  /** Requests answered with something else than the App expects (an unknown route: 404). */
  readonly unknownRequests: () => string[];
  close(): Promise<void>;
}

const headSha = (n: number) => n.toString(16).padStart(40, 'a');

function pullRequest(n: number) {
  return {
    number: n,
    title: `Dependency bump ${n}`,
    html_url: `https://github.com/${OWNER}/${REPO}/pull/${n}`,
    user: { login: BOT, type: 'Bot' },
    head: { sha: headSha(n), ref: `bump-${n}` },
    base: { ref: 'main' },
    additions: 10,
    deletions: 2,
    changed_files: 2,
    labels: [],
    updated_at: '2026-01-15T09:00:00Z',
    draft: false,
    state: 'open',
    assignees: [],
  };
}

export async function startFakeGitHub(): Promise<FakeGitHub> {
  const appKey = generateKeyPairSync('rsa', { modulusLength: 2048 })
    .privateKey.export({ format: 'pem', type: 'pkcs8' })
    .toString();
  let writes = 0;
  let nextCheck = 1000;
  const unknown: string[] = [];
  const repo = `/repos/${OWNER}/${REPO}`;
  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
    res.end(JSON.stringify(body));
  };
  const answer = (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    // GitHub Enterprise Server's REST API lives under /api/v3.
    const path = url.pathname.replace(/^\/api\/v3/, '');
    const method = req.method ?? 'GET';
    let match: RegExpExecArray | null;
    if (method === 'POST' && path === `/app/installations/${INSTALLATION}/access_tokens`) {
      return json(res, 201, { token: 'ghs_soak', expires_at: '2099-01-01T00:00:00Z' });
    }
    if (method === 'GET' && (match = new RegExp(`^${repo}/pulls/(\\d+)$`).exec(path))) {
      return json(res, 200, pullRequest(Number(match[1])));
    }
    if (method === 'GET' && new RegExp(`^${repo}/pulls/\\d+/files$`).test(path)) {
      const page = Number(url.searchParams.get('page') ?? 1);
      const files = ['package.json', 'package-lock.json'].map((filename, i) => ({
        sha: String(i),
        status: 'modified',
        filename,
      }));
      return json(res, 200, page === 1 ? files : []);
    }
    if (method === 'GET' && new RegExp(`^${repo}/pulls/\\d+/(reviews|commits)$`).test(path)) {
      return json(res, 200, []);
    }
    if (method === 'GET' && new RegExp(`^${repo}/commits/[0-9a-f]+/check-runs$`).test(path)) {
      return json(res, 200, { total_count: 0, check_runs: [] });
    }
    if (method === 'GET' && new RegExp(`^${repo}/commits/[0-9a-f]+/status$`).test(path)) {
      return json(res, 200, { state: 'success', statuses: [] });
    }
    if (method === 'GET' && new RegExp(`^${repo}/collaborators/[^/]+/permission$`).test(path)) {
      return json(res, 200, { permission: 'read', role_name: 'read' });
    }
    // No .github/svc.yml, no CODEOWNERS, no organisation-wide config: GitHub's 404.
    if (method === 'GET' && /^\/repos\/[^/]+\/[^/]+\/contents\//.test(path)) {
      return json(res, 404, { message: 'Not Found' });
    }
    if (method === 'POST' && path === `${repo}/check-runs`) {
      writes++;
      return json(res, 201, { id: nextCheck++ });
    }
    if (method === 'PATCH' && (match = new RegExp(`^${repo}/check-runs/(\\d+)$`).exec(path))) {
      writes++;
      return json(res, 200, { id: Number(match[1]) });
    }
    if (unknown.length < 20) unknown.push(`${method} ${path}`);
    return json(res, 404, { message: 'Not Found' });
  };
  const server = createServer((req, res) => {
    // The body is not needed; reading it lets the connection be reused.
    req.resume();
    req.once('end', () => answer(req, res));
  });
  server.listen(0, LOOPBACK);
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    host: `${LOOPBACK}:${port}`,
    appKey,
    checkRunWrites: () => writes,
    unknownRequests: () => [...unknown],
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

/** A signed pull_request.opened delivery, as GitHub sends one for the bot's pull request n. */
export async function pullRequestDelivery(
  secret: string,
  n: number,
): Promise<{ body: string; headers: Record<string, string> }> {
  const body = JSON.stringify({
    action: 'opened',
    number: n,
    pull_request: pullRequest(n),
    sender: { login: BOT, type: 'Bot' },
    repository: {
      id: 1,
      name: REPO,
      full_name: `${OWNER}/${REPO}`,
      owner: { login: OWNER, type: 'Organization' },
    },
    installation: { id: INSTALLATION },
  });
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'x-github-event': 'pull_request',
      'x-github-delivery': `soak-${n}-${Date.now()}`,
      'x-hub-signature-256': await sign(secret, body),
    },
  };
}

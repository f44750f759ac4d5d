import { generateKeyPairSync } from 'node:crypto';
import { sign } from '@octokit/webhooks-methods';
import { afterAll, afterEach, beforeAll } from '@jest/globals';
import nock from 'nock';
import type { Logger } from 'pino';
import { ProbotOctokit } from 'probot';
import request from 'supertest';
import type { ServerKey } from '../../../src/ports/signer.js';
import type { Store } from '../../../src/ports/store.js';
import { buildTestApp, type TestApp } from '../../support/harness.js';

export const API = 'https://api.github.com';
export const APP_ID = 4242;
export const INSTALLATION = 777;
export const SECRET = 'webhook-secret-for-tests';
export const OWNER = 'acme';
export const REPO = 'web';
export const BASE_URL = 'https://svc.example.com';

export const appKey = generateKeyPairSync('rsa', { modulusLength: 2048 })
  .privateKey.export({ format: 'pem', type: 'pkcs8' })
  .toString();

// Probot's retries and throttling would make every failure test wait seconds.
export const TestOctokit = ProbotOctokit.defaults((options: Record<string, unknown>) => ({
  ...options,
  retry: { enabled: false },
  throttle: { ...(options.throttle as object), enabled: false },
}));

export interface PullRequestState {
  number: number;
  author: string;
  authorType?: 'User' | 'Bot';
  headSha: string;
  baseRef?: string;
  title?: string;
  draft?: boolean;
  state?: 'open' | 'closed';
  assignees?: string[];
  labels?: string[];
  /** Changed files as GET /pulls/{n}/files lists them (default: three files). */
  files?: (string | { filename: string; previous_filename: string })[];
  /** `changed_files` of the pull request (default: how many `files` holds). */
  changedFiles?: number;
  /** The status GET /pulls/{n}/files answers with instead of the list. */
  filesStatus?: number;
  /** Set for a merged pull request: the commit its merge made (listed for that commit too). */
  mergeCommitSha?: string;
}

const DEFAULT_FILES = ['src/session.ts', 'src/session.test.ts', 'docs/sessions.md'];

export interface RepoState {
  pulls: Map<number, PullRequestState>;
  /** .github/svc.yml per branch (null: no file). */
  config: Map<string, string | null>;
  /** Fallback config in the owner's .github repository. */
  orgConfig: string | null;
  reviews: Map<
    number,
    {
      user: string;
      /** GitHub's account type of the reviewer; `User` unless said otherwise. */
      userType?: 'User' | 'Bot';
      state: string;
      commit_id: string;
      submitted_at: string;
    }[]
  >;
  /** Logins whose permission the App looked up, in order. */
  permissionLookups?: string[];
  checkRuns: Map<
    string,
    {
      name: string;
      status: string;
      conclusion: string | null;
      app_id: number;
      completed_at?: string;
      suite?: number;
    }[]
  >;
  statuses: Map<string, { context: string; state: string; updated_at: string }[]>;
  /** Permission per login (default read; `not_found`: GitHub answers 404). */
  permissions: Map<string, string>;
  /** Authors and committers of each pull request's commits (and their ids, when set). */
  commits: Map<number, { author: string; committer: string; sha?: string }[]>;
  /** CODEOWNERS files by path (.github/CODEOWNERS, CODEOWNERS, docs/CODEOWNERS) and ref. */
  codeowners: Map<string, string>;
  /** CODEOWNERS reads, as `<ref>:<path>`, in order. */
  codeownersReads: string[];
  /** Active members of each `org/team`. */
  teams: Map<string, string[]>;
  /** Team membership lookups, as `org/team:user`, in order. */
  teamLookups: string[];
  /** Pages of GET /pulls/{n}/files asked for, as `<per_page>:<page>`. */
  filePages: string[];
  /** How many check-run updates to answer 502 before accepting them again. */
  failPatches?: number;
  /**
   * The status POST /actions/runs/{id}/deployment_protection_rule answers with (default 204);
   * GitHub answers 422 for a deployment it decided already.
   */
  deploymentReviewStatus?: number;
}

export const newRepoState = (): RepoState => ({
  pulls: new Map(),
  config: new Map(),
  orgConfig: null,
  reviews: new Map(),
  checkRuns: new Map(),
  statuses: new Map(),
  permissions: new Map(),
  commits: new Map(),
  codeowners: new Map(),
  codeownersReads: [],
  teams: new Map(),
  teamLookups: [],
  filePages: [],
});

export interface CheckRunWrite {
  method: 'POST' | 'PATCH';
  id: number;
  body: Record<string, unknown>;
}

function prJson(pr: PullRequestState) {
  return {
    number: pr.number,
    title: pr.title ?? `Change ${pr.number}`,
    html_url: `https://github.com/${OWNER}/${REPO}/pull/${pr.number}`,
    user: { login: pr.author, type: pr.authorType ?? 'User' },
    head: { sha: pr.headSha, ref: `feature-${pr.number}` },
    base: { ref: pr.baseRef ?? 'main' },
    additions: 10,
    deletions: 2,
    changed_files: pr.changedFiles ?? (pr.files ?? DEFAULT_FILES).length,
    labels: (pr.labels ?? []).map((name, i) => ({ id: i + 1, name, color: 'ededed' })),
    updated_at: '2026-01-15T09:00:00Z',
    draft: pr.draft ?? false,
    state: pr.state ?? 'open',
    assignees: (pr.assignees ?? []).map((login) => ({ login, type: 'User' })),
    merged_at: pr.mergeCommitSha ? '2026-01-15T10:00:00Z' : null,
    merge_commit_sha: pr.mergeCommitSha ?? null,
  };
}

/** A request the App sent to a deployment's callback, as GitHub received it. */
export interface DeploymentReviewWrite {
  runId: number;
  body: Record<string, unknown>;
  status: number;
}

const jsonOrText = (body: string): unknown => {
  try {
    return JSON.parse(body);
  } catch {
    return body;
  }
};

/** A request the App sent to GitHub with a body, as GitHub received it. */
export interface SentRequest {
  method: string;
  path: string;
  body: unknown;
}

/**
 * GitHub's REST API as the App uses it, answered from `state` through nock. Check-run writes
 * are recorded in order, so tests assert the exact requests; `sent` holds every request that
 * carried a body, whatever its route, for checks against GitHub's schemas (github-openapi.ts).
 */
export function fakeGitHub(state: RepoState) {
  const writes: CheckRunWrite[] = [];
  const deploymentReviews: DeploymentReviewWrite[] = [];
  const sent: SentRequest[] = [];
  let nextCheck = 1000;
  const repo = `/repos/${OWNER}/${REPO}`;
  const scope = nock(API)
    .persist()
    .post(`/app/installations/${INSTALLATION}/access_tokens`)
    .reply(201, { token: 'ghs_test', expires_at: '2099-01-01T00:00:00Z', permissions: {} })
    .get(new RegExp(`^${repo}/pulls/(\\d+)$`))
    .reply((uri) => {
      const pr = state.pulls.get(Number(/pulls\/(\d+)$/.exec(uri)![1]));
      return pr ? [200, prJson(pr)] : [404, { message: 'Not Found' }];
    })
    .get(new RegExp(`^${repo}/pulls/(\\d+)/files`))
    .reply((uri) => {
      const number = Number(/pulls\/(\d+)\/files/.exec(uri)![1]);
      const pr = state.pulls.get(number);
      if (!pr) return [404, { message: 'Not Found' }];
      if (pr.filesStatus) return [pr.filesStatus, { message: 'Sorry, the diff is too large' }];
      const query = new URL(uri, API).searchParams;
      const perPage = Number(query.get('per_page') ?? 30);
      const page = Number(query.get('page') ?? 1);
      state.filePages.push(`${perPage}:${page}`);
      // GitHub lists at most 3,000 files, whatever the pull request holds.
      const all = (pr.files ?? DEFAULT_FILES).slice(0, 3000).map((f, i) => ({
        sha: String(i),
        status: typeof f === 'string' ? 'modified' : 'renamed',
        ...(typeof f === 'string' ? { filename: f } : f),
      }));
      // Links go on as if every file could be listed: the App must stop at 3,000 itself.
      const last = Math.max(1, Math.ceil((pr.files ?? DEFAULT_FILES).length / perPage));
      const next = `<${API}${repo}/pulls/${number}/files?per_page=${perPage}&page=${page + 1}>; rel="next"`;
      return [
        200,
        all.slice((page - 1) * perPage, page * perPage),
        page < last ? { link: next } : {},
      ];
    })
    .get(new RegExp(`^${repo}/contents/(\\.github(%2F|/)|docs(%2F|/))?CODEOWNERS`))
    .reply((uri) => {
      const url = new URL(uri, API);
      const path = decodeURIComponent(url.pathname.slice(`${repo}/contents/`.length));
      const ref = url.searchParams.get('ref') ?? '';
      state.codeownersReads.push(`${ref}:${path}`);
      const text = state.codeowners.get(path);
      return text === undefined
        ? [404, { message: 'Not Found' }]
        : [200, text, { 'content-type': 'text/plain; charset=utf-8' }];
    })
    .get(new RegExp(`^/orgs/([^/]+)/teams/([^/]+)/memberships/([^/?]+)`))
    .reply((uri) => {
      const [, org, team, user] = /orgs\/([^/]+)\/teams\/([^/]+)\/memberships\/([^/?]+)/.exec(uri)!;
      const slug = `${org}/${team}`.toLowerCase();
      state.teamLookups.push(`${slug}:${user}`);
      return state.teams.get(slug)?.includes(user!)
        ? [200, { state: 'active', role: 'member' }]
        : [404, { message: 'Not Found' }];
    })
    .get(new RegExp(`^${repo}/pulls/(\\d+)/reviews`))
    .reply((uri) => {
      const number = Number(/pulls\/(\d+)\/reviews/.exec(uri)![1]);
      return [
        200,
        (state.reviews.get(number) ?? []).map((r, i) => ({
          id: i + 1,
          user: { login: r.user, type: r.userType ?? 'User' },
          state: r.state,
          commit_id: r.commit_id,
          submitted_at: r.submitted_at,
          html_url: `https://github.com/${OWNER}/${REPO}/pull/${number}#review-${i + 1}`,
        })),
      ];
    })
    .get(new RegExp(`^${repo}/collaborators/([^/]+)/permission`))
    .reply((uri) => {
      const login = decodeURIComponent(/collaborators\/([^/]+)\/permission/.exec(uri)![1]!);
      state.permissionLookups?.push(login);
      const permission = state.permissions.get(login) ?? 'read';
      // An account GitHub does not know as a collaborator.
      if (permission === 'not_found') return [404, { message: 'Not Found' }];
      return [
        200,
        {
          permission: permission === 'maintain' ? 'write' : permission,
          role_name: permission,
          user: { login },
        },
      ];
    })
    .get(new RegExp(`^${repo}/pulls/(\\d+)/commits`))
    .reply((uri) => {
      const number = Number(/pulls\/(\d+)\/commits/.exec(uri)![1]);
      return [
        200,
        (state.commits.get(number) ?? []).map((c, i) => ({
          sha: c.sha ?? String(i).repeat(40).slice(0, 40),
          author: { login: c.author },
          committer: { login: c.committer },
        })),
      ];
    })
    .get(new RegExp(`^${repo}/commits/([0-9a-f]+)/check-runs`))
    .reply((uri) => {
      const sha = /commits\/([0-9a-f]+)\/check-runs/.exec(uri)![1]!;
      const query = new URL(uri, API).searchParams;
      if (query.get('app_id') === String(APP_ID)) {
        // Our own check runs on the commit, as the App wrote them.
        const ours = writes
          .filter((w) => w.method === 'POST' && w.body.head_sha === sha)
          .map((w) => {
            const updates = writes.filter((u) => u.method === 'PATCH' && u.id === w.id);
            return {
              id: w.id,
              name: w.body.name,
              app: { id: APP_ID },
              status: updates.some((u) => u.body.status === 'completed')
                ? 'completed'
                : 'in_progress',
              external_id: updates.at(-1)?.body.external_id ?? null,
            };
          })
          .filter(
            (run) =>
              (!query.get('check_name') || run.name === query.get('check_name')) &&
              (!query.get('status') || run.status === query.get('status')),
          );
        return [200, { total_count: ours.length, check_runs: ours }];
      }
      const runs = state.checkRuns.get(sha) ?? [];
      return [
        200,
        {
          total_count: runs.length,
          check_runs: runs.map((r, i) => ({
            id: 500 + i,
            name: r.name,
            status: r.status,
            conclusion: r.conclusion,
            html_url: `https://github.com/${OWNER}/${REPO}/runs/${500 + i}`,
            started_at: '2026-01-15T08:00:00Z',
            completed_at:
              r.completed_at ?? (r.status === 'completed' ? '2026-01-15T08:30:00Z' : null),
            app: { id: r.app_id },
            check_suite: { id: r.suite ?? 1 },
          })),
        },
      ];
    })
    .get(new RegExp(`^${repo}/commits/([0-9a-f]+)/status`))
    .reply((uri) => {
      const sha = /commits\/([0-9a-f]+)\/status/.exec(uri)![1]!;
      const statuses = state.statuses.get(sha) ?? [];
      return [
        200,
        {
          state: 'success',
          statuses: statuses.map((s) => ({ ...s, target_url: `https://ci.example/${s.context}` })),
        },
      ];
    })
    .get(new RegExp(`^${repo}/commits/([0-9a-f]+)/pulls`))
    .reply((uri) => {
      const sha = /commits\/([0-9a-f]+)\/pulls/.exec(uri)![1]!;
      return [
        200,
        [...state.pulls.values()]
          .filter((p) => p.headSha === sha || p.mergeCommitSha === sha)
          .map(prJson),
      ];
    })
    .get(new RegExp(`^${repo}/contents/\\.github(%2F|/)svc\\.yml`))
    .reply((uri) => {
      const ref = new URL(uri, API).searchParams.get('ref') ?? 'main';
      const text = state.config.get(ref);
      return text
        ? [200, text, { 'content-type': 'text/plain; charset=utf-8' }]
        : [404, { message: 'Not Found' }];
    })
    .get(new RegExp(`^/repos/${OWNER}/\\.github/contents/`))
    .reply(() =>
      state.orgConfig
        ? [200, state.orgConfig, { 'content-type': 'text/plain; charset=utf-8' }]
        : [404, { message: 'Not Found' }],
    )
    .post(`${repo}/check-runs`)
    .reply((_uri, body) => {
      const id = nextCheck++;
      writes.push({ method: 'POST', id, body: body as Record<string, unknown> });
      return [201, { id }];
    })
    .patch(new RegExp(`^${repo}/check-runs/(\\d+)$`))
    .reply((uri, body) => {
      const id = Number(/check-runs\/(\d+)$/.exec(uri)![1]);
      if (state.failPatches) {
        state.failPatches--;
        return [502, { message: 'Server Error' }];
      }
      writes.push({ method: 'PATCH', id, body: body as Record<string, unknown> });
      return [200, { id }];
    })
    .get(new RegExp(`^${repo}$`))
    .reply(200, { name: REPO, full_name: `${OWNER}/${REPO}`, default_branch: 'main' })
    .post(new RegExp(`^${repo}/actions/runs/(\\d+)/deployment_protection_rule$`))
    .reply((uri, body) => {
      const runId = Number(/runs\/(\d+)\//.exec(uri)![1]);
      const status = state.deploymentReviewStatus ?? 204;
      deploymentReviews.push({ runId, body: body as Record<string, unknown>, status });
      return status === 204
        ? [204, '']
        : [status, { message: 'No pending custom deployment requests to approve or reject' }];
    });
  scope.on('request', (req: { method: string; path: string }, _interceptor, body: string) => {
    if (body) sent.push({ method: req.method, path: req.path, body: jsonOrText(body) });
  });
  return { scope, writes, deploymentReviews, sent };
}

/** The app with the GitHub App mounted: the harness's app (buildTestApp) with GitHub config. */
export type AppUnderTest = TestApp;

export function appWithGithub(
  options: {
    store?: Store;
    github?: boolean;
    secret?: string | undefined;
    allowPrivateWebhookUrls?: boolean;
    logger?: Logger;
    /** The service's base URL (default BASE_URL); the explorer's browser tests pass their own. */
    baseUrl?: string;
    serverKey?: ServerKey;
    explorerScript?: string;
  } = {},
): AppUnderTest {
  return buildTestApp({
    store: options.store,
    serverKey: options.serverKey,
    retryDelaysMs: [1000, 1000],
    config: {
      baseUrl: options.baseUrl ?? BASE_URL,
      allowPrivateWebhookUrls: options.allowPrivateWebhookUrls ?? false,
      webhookSecret: 'secret' in options ? options.secret : SECRET,
      github:
        options.github === false
          ? { apiBaseUrl: API, host: 'github.com' }
          : { appId: APP_ID, privateKey: appKey, apiBaseUrl: API, host: 'github.com' },
    },
    logger: options.logger,
    githubOctokit: TestOctokit,
    explorerScript: options.explorerScript,
  });
}

let deliveries = 0;

/** Sends a delivery the way GitHub does: raw JSON, signed over its bytes. */
export async function deliver(
  t: { app: AppUnderTest['app'] },
  event: string,
  payload: object,
  options: { id?: string; secret?: string; signature?: string | null } = {},
) {
  const body = JSON.stringify(payload);
  const id = options.id ?? `delivery-${++deliveries}-${Date.now()}`;
  const req = request(t.app)
    .post('/v1/webhook/scm')
    .set('Content-Type', 'application/json')
    .set('X-GitHub-Event', event)
    .set('X-GitHub-Delivery', id);
  const signature =
    options.signature === undefined
      ? await sign(options.secret ?? SECRET, body)
      : options.signature;
  if (signature !== null) req.set('X-Hub-Signature-256', signature);
  return req.send(body);
}

const common = () => ({
  repository: {
    id: 1,
    name: REPO,
    full_name: `${OWNER}/${REPO}`,
    owner: { login: OWNER, type: 'Organization' },
  },
  installation: { id: INSTALLATION },
});

export function pullRequestEvent(
  action: string,
  pr: PullRequestState,
  sender: { login: string; type?: string } = { login: pr.author, type: pr.authorType ?? 'User' },
) {
  return { action, number: pr.number, pull_request: prJson(pr), sender, ...common() };
}

export function reviewEvent(
  action: string,
  pr: PullRequestState,
  reviewer: string,
  reviewerType: 'User' | 'Bot' = 'User',
) {
  return {
    action,
    review: {
      user: { login: reviewer, type: reviewerType },
      state: 'approved',
      commit_id: pr.headSha,
    },
    pull_request: prJson(pr),
    sender: { login: reviewer, type: reviewerType },
    ...common(),
  };
}

export function checkSuiteEvent(
  sha: string,
  options: { appId?: number; numbers?: number[]; branch?: string } = {},
) {
  return {
    action: 'completed',
    check_suite: {
      id: 9,
      head_sha: sha,
      head_branch: options.branch ?? 'feature',
      status: 'completed',
      conclusion: 'success',
      app: { id: options.appId ?? 1 },
      pull_requests: (options.numbers ?? []).map((number) => ({ number, head: { sha } })),
    },
    sender: { login: 'ci-bot', type: 'Bot' },
    ...common(),
  };
}

export function statusEvent(sha: string, branches: string[] = ['feature']) {
  return {
    id: 1,
    sha,
    context: 'ci/legacy',
    state: 'success',
    branches: branches.map((name) => ({ name, commit: { sha } })),
    sender: { login: 'ci-bot', type: 'Bot' },
    ...common(),
  };
}

export function ourCheckRunEvent(
  action: 'rerequested' | 'requested_action',
  sha: string,
  numbers: number[],
  identifier = 're-evaluate',
) {
  return {
    action,
    check_run: {
      id: 1000,
      head_sha: sha,
      name: 'svc / admissibility',
      app: { id: APP_ID },
      check_suite: { head_branch: 'feature' },
      pull_requests: numbers.map((number) => ({ number, head: { sha } })),
    },
    ...(action === 'requested_action' ? { requested_action: { identifier } } : {}),
    sender: { login: 'maintainer', type: 'User' },
    ...common(),
  };
}

export function mergeGroupEvent(headSha: string, numbers: number[], base = 'main') {
  const ref = `refs/heads/gh-readonly-queue/${base}/${numbers.map((n) => `pr-${n}-${'a'.repeat(40)}`).join('-')}`;
  return {
    action: 'checks_requested',
    merge_group: {
      head_sha: headSha,
      head_ref: ref,
      base_sha: 'b'.repeat(40),
      base_ref: `refs/heads/${base}`,
    },
    ...common(),
  };
}

/** Closes the network for a describe block: GitHub only through nock, loopback allowed. */
export function closedNetwork(): void {
  beforeAll(() => {
    nock.disableNetConnect();
    nock.enableNetConnect('127.0.0.1');
  });
  afterAll(() => nock.enableNetConnect());
  afterEach(() => nock.cleanAll());
}

/** A press of one of our check run's buttons, as GitHub delivers it. */
export function checkRunActionEvent(
  run: {
    id: number;
    headSha: string;
    externalId: string | null;
    numbers?: number[];
    /** The run's conclusion when pressed (default action_required). */
    conclusion?: string;
  },
  identifier: string,
  sender: { login: string; type?: 'User' | 'Bot' },
) {
  return {
    action: 'requested_action',
    check_run: {
      id: run.id,
      head_sha: run.headSha,
      external_id: run.externalId,
      name: 'svc / admissibility',
      status: 'completed',
      conclusion: run.conclusion ?? 'action_required',
      app: { id: APP_ID },
      check_suite: { head_branch: 'feature' },
      pull_requests: (run.numbers ?? []).map((number) => ({ number, head: { sha: run.headSha } })),
    },
    requested_action: { identifier },
    sender: { login: sender.login, type: sender.type ?? 'User' },
    ...common(),
  };
}

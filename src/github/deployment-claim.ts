import { hashCanonical, proceeds } from '@svc/verify';
import type { ClaimInput } from '../core/claim-schema.js';
import type { DeploymentPolicy } from './environment-config.js';
import type { MergeGroupMember } from './merge-group-claim.js';
import { ciFactOf, ciSource, latest, sourceProvenance, type CiRun } from './pull-request-claim.js';
import { checksOf } from './rule-facts.js';

/** What a deployment_protection_rule delivery and GitHub say about a waiting deployment. */
export interface DeploymentEvidence {
  /** owner/name */
  repository: string;
  environment: string;
  deploymentId: number;
  /** The workflow run whose job waits on the environment (the callback answers it). */
  runId: number;
  sha: string;
  ref: string;
  /** What started the run (push, workflow_dispatch, ...), when GitHub says. */
  event: string | null;
  /** Who started the run, and whether the config's `agents` globs name them. */
  actor: { login: string; agent: boolean } | null;
  /** CI of the deployed commit; the waiting run's own jobs are left out. */
  ci: CiRun[];
  /** The pull requests that brought `sha`, each with this installation's receipt at its head. */
  pullRequests: MergeGroupMember[];
  host: string;
  baseUrl: string;
}

/** The waiting run's own check runs: its jobs are in progress until svc answers. */
const ofRun = (run: CiRun, runId: number) =>
  run.url !== null && run.url.includes(`/actions/runs/${runId}/`);

/**
 * The claim of a deployment waiting on an environment: the deployed commit's CI (a named
 * check reaches `action.checks` for rules), and for each pull request that brought the
 * commit the receipt svc gave it, admissible only when ALLOWED · ACCEPTED — a BLOCKED one is
 * kept as evidence against. A person's approval of such a pull request, as its receipt
 * records, carries over. The claim_id names the deployment and its run, so a redelivery of
 * the same evidence replays the same receipt.
 */
export function buildDeploymentClaim(
  evidence: DeploymentEvidence,
  gate: DeploymentPolicy,
): ClaimInput {
  const { repository, sha, host, environment } = evidence;
  const short = sha.slice(0, 12);
  const commitUrl = `https://${host}/${repository}/commit/${sha}`;
  const runUrl = `https://${host}/${repository}/actions/runs/${evidence.runId}`;
  const ci = evidence.ci.filter((run) => !ofRun(run, evidence.runId));
  const capturedAt = latest(ci.map((r) => r.at));
  const provenance = (via: string) => sourceProvenance(host, sha, capturedAt, via);
  const sources: ClaimInput['sources'] = [];
  for (const { number, headSha, url, receipt } of evidence.pullRequests) {
    const allowed = receipt !== null && proceeds(receipt.verdict, receipt.admissibility);
    sources.push({
      id: `merge-receipt:pr-${number}`,
      type: 'policy_check',
      uri: receipt ? `${evidence.baseUrl}/v1/receipts/${receipt.receipt_id}` : url,
      confidence: allowed ? 0.95 : 0.05,
      content: receipt
        ? `Pull request #${number} brought ${short}: its receipt ${receipt.receipt_id} at ${headSha.slice(0, 12)} is ${receipt.verdict} · ${receipt.admissibility}`
        : `Pull request #${number} brought ${short} with no receipt of this installation at ${headSha.slice(0, 12)}`,
      admissibility: allowed
        ? { state: 'ADMISSIBLE', reason: 'svc allowed its merge' }
        : {
            state: 'INADMISSIBLE',
            reason: receipt ? 'svc did not allow its merge' : 'not evaluated by svc',
          },
      provenance: provenance('pulls'),
    });
  }
  const approved = evidence.pullRequests.filter((pr) => pr.approved && pr.receipt);
  if (approved.length > 0 && approved.length === evidence.pullRequests.length) {
    sources.push({
      id: `approvals@${short}`,
      type: 'human_approval',
      uri: commitUrl,
      confidence: 0.95,
      content: `A person approved ${approved.map((pr) => `#${pr.number}`).join(', ')} on its latest push, as its receipt records`,
      provenance: provenance('pulls'),
    });
  }
  sources.push(
    ciSource(ci, sha, commitUrl, provenance('checks')) ?? {
      id: `ci@${short}`,
      type: 'ci',
      uri: commitUrl,
      confidence: 0.3,
      content: `No CI has reported on ${short}`,
      admissibility: { state: 'INADMISSIBLE', reason: 'no CI on the deployed commit' },
      provenance: provenance('checks'),
    },
  );
  sources.push({
    id: `deployment:${evidence.deploymentId}`,
    type: 'scm',
    uri: runUrl,
    confidence: 0.9,
    content: `Workflow run ${evidence.runId}${evidence.event ? ` (${evidence.event})` : ''}${evidence.actor ? ` by ${evidence.actor.login}` : ''} deploys ${evidence.ref} at ${short} to ${environment}`,
    provenance: provenance('deployments'),
  });
  const actor = evidence.actor;
  const body = {
    entity: repository,
    claim: `Deploy ${evidence.ref} at ${short} to ${environment}`,
    action: {
      action_type: 'deployment' as const,
      target_system: 'github',
      repository,
      commit: sha,
      branch: evidence.ref.replace(/^refs\/heads\//, ''),
      environment,
      ...(actor ? (actor.agent ? { agent: actor.login } : { human_operator: actor.login }) : {}),
      checks: checksOf(ci.map(ciFactOf)),
    },
    sources,
    ...(gate.policy ? { policy: gate.policy } : {}),
    ...(gate.policyConfig ? { policyConfig: gate.policyConfig } : {}),
  };
  const digest = hashCanonical(body).slice(7, 23);
  return {
    claim_id: `gh:${repository}:deployment-${evidence.deploymentId}@run-${evidence.runId}:${digest}`,
    ...body,
  };
}

/** The workflow run a deployment callback answers: the id in its URL, or null. */
export function runIdOfCallback(url: string): number | null {
  if (!URL.canParse(url)) return null;
  const match =
    /\/repos\/[^/]+\/[^/]+\/actions\/runs\/(\d{1,15})\/deployment_protection_rule$/.exec(
      new URL(url).pathname,
    );
  return match ? Number(match[1]) : null;
}

/** The workflow run a deployment claim of the App names in its claim_id, or null. */
export function runIdOfClaim(claimId: string): number | null {
  const match = /^gh:[^:]+:deployment-\d+@run-(\d{1,15}):[0-9a-f]+$/.exec(claimId);
  return match ? Number(match[1]) : null;
}

import { hashCanonical, proceeds } from '@svc/verify';
import type { ClaimInput } from '../core/claim-schema.js';
import { ciFactOf, ciSource, latest, sourceProvenance, type CiRun } from './pull-request-claim.js';
import { checksOf } from './rule-facts.js';

/** One pull request of a merge group, with the receipt its own gate gave it at its head. */
export interface MergeGroupMember {
  number: number;
  headSha: string;
  url: string;
  /** This installation's receipt of the pull request at `headSha`, when it has one. */
  receipt: {
    receipt_id: string;
    verdict: string;
    admissibility: string;
  } | null;
  /** Whether that receipt's claim holds a human approval of the latest push. */
  approved: boolean;
}

export interface MergeGroupEvidence {
  /** owner/name */
  repository: string;
  /** The group's head commit: the merged result. */
  headSha: string;
  /** The branch the group merges into (without refs/heads/). */
  baseRef: string;
  members: MergeGroupMember[];
  /** CI of the group's head commit. */
  ci: CiRun[];
  /** GitHub host, for links and the chain of custody. */
  host: string;
  /** svc's public base URL, for receipt links. */
  baseUrl: string;
}

/**
 * The claim of a merge group (merge queue) at its head commit. Each member pull request was
 * judged by its own gate, on its own facts and under the rules those facts meet: the group
 * claim holds each member's current receipt (admissible only when ALLOWED · ACCEPTED), the
 * CI of the merged result, and — when every member was approved on its latest push — that
 * approval. Of the members conditional rules read it carries only `checks`, those of the
 * merged result: rules about paths, labels, authors or approvals were applied to each member
 * on its own facts, and a rule conditioned on them does not apply to the group. Same
 * evidence, same claim_id.
 */
export function buildMergeGroupClaim(
  evidence: MergeGroupEvidence,
  repoPolicy: { policy?: string; policyConfig?: ClaimInput['policyConfig'] },
): ClaimInput {
  const { repository, headSha, baseRef, members, host } = evidence;
  const short = headSha.slice(0, 12);
  const commitUrl = `https://${host}/${repository}/commit/${headSha}`;
  // The newest evidence time, so the same evidence always makes the same claim.
  const capturedAt = latest(evidence.ci.map((r) => r.at));
  const provenance = (via: string) => sourceProvenance(host, headSha, capturedAt, via);
  const sources: ClaimInput['sources'] = members.map(({ number, headSha: sha, url, receipt }) => {
    const allowed = receipt !== null && proceeds(receipt.verdict, receipt.admissibility);
    return {
      id: `receipt:pr-${number}`,
      type: 'policy_check',
      uri: receipt ? `${evidence.baseUrl}/v1/receipts/${receipt.receipt_id}` : url,
      confidence: allowed ? 0.95 : 0.05,
      content: receipt
        ? `Pull request #${number} at ${sha.slice(0, 12)}: receipt ${receipt.receipt_id}, ${receipt.verdict} · ${receipt.admissibility}`
        : `Pull request #${number} at ${sha.slice(0, 12)} has no receipt of this installation`,
      admissibility: allowed
        ? { state: 'ADMISSIBLE', reason: 'its own gate allowed it', required: true }
        : {
            state: 'INADMISSIBLE',
            reason: receipt ? 'its own gate did not allow it' : 'not evaluated by svc',
            required: true,
          },
      provenance: provenance('pulls'),
    };
  });
  const numbers = members.map((m) => m.number);
  // Each member's own approval carries over: otherwise a policy that requires one would send
  // every merge group to a human again.
  if (members.length > 0 && members.every((m) => m.approved)) {
    sources.push({
      id: `approvals@${short}`,
      type: 'human_approval',
      uri: commitUrl,
      confidence: 0.95,
      content: `Every pull request of the group (${numbers.map((n) => `#${n}`).join(', ')}) was approved on its latest push, as its own receipt records`,
      provenance: provenance('pulls'),
    });
  }
  sources.push(
    ciSource(evidence.ci, headSha, commitUrl, provenance('checks')) ?? {
      id: `ci@${short}`,
      type: 'ci',
      uri: commitUrl,
      confidence: 0.3,
      content: 'No CI has reported on the merge group yet',
      admissibility: {
        state: 'INADMISSIBLE',
        reason: 'CI has not started on the merged result; svc evaluates again when it completes',
        required: true,
      },
      provenance: provenance('checks'),
    },
  );
  const body = {
    entity: repository,
    claim: `Merge queue group ${short} into ${baseRef}: pull requests ${numbers.map((n) => `#${n}`).join(', ') || 'none'}`,
    action: {
      action_type: 'merge' as const,
      target_system: 'github',
      repository,
      commit: headSha,
      branch: baseRef,
      checks: checksOf(evidence.ci.map(ciFactOf)),
    },
    sources,
    ...(repoPolicy.policy ? { policy: repoPolicy.policy } : {}),
    ...(repoPolicy.policyConfig ? { policyConfig: repoPolicy.policyConfig } : {}),
  };
  const digest = hashCanonical(body).slice(7, 23);
  return { claim_id: `gh:${repository}:merge-group@${headSha}:${digest}`, ...body };
}

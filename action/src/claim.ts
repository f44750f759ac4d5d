/** The parts of the workflow run a claim is built from (read from @actions/github's context). */
export interface WorkflowContext {
  /** owner/name */
  repository: string;
  eventName: string;
  sha: string;
  ref: string;
  actor: string;
  workflow: string;
  job: string;
  /** The step's id (GITHUB_ACTION): tells two uses of the Action in one job apart. */
  action: string;
  runId: number;
  runAttempt: number;
  serverUrl: string;
  pullRequest: { number: number; headSha: string; headRef: string; title: string | null } | null;
}

/** The run as a URL: the ci source of a claim built from context. */
export const runUrl = (c: WorkflowContext): string =>
  `${c.serverUrl}/${c.repository}/actions/runs/${c.runId}/attempts/${c.runAttempt}`;

/**
 * A claim from the workflow context, when the workflow gives none. `claim_id` names the run
 * attempt, job and step: a re-run is a new claim (svc would otherwise answer the first
 * attempt's receipt, or 409 when the evidence changed), while a retried request within one
 * attempt stays idempotent.
 */
export function buildClaim(c: WorkflowContext): Record<string, unknown> {
  const pr = c.pullRequest;
  const branch = pr ? pr.headRef : c.ref.replace(/^refs\/(heads|tags)\//, '');
  const commit = pr ? pr.headSha : c.sha;
  const subject = pr ? `pull request #${pr.number}${pr.title ? ` (${pr.title})` : ''}` : branch;
  return {
    claim_id: `gh:${c.repository}:run-${c.runId}-${c.runAttempt}:${c.job}:${c.action}`,
    entity: c.repository,
    claim: `${pr ? 'Merge' : 'Proceed with'} ${subject} of ${c.repository} at ${commit.slice(0, 12)}: workflow "${c.workflow}", job ${c.job}, ${c.eventName} by ${c.actor}`,
    action: {
      action_type: pr ? 'merge' : 'code_change',
      target_system: 'github',
      repository: c.repository,
      ...(pr ? { pull_request: pr.number } : {}),
      commit,
      ...(branch ? { branch } : {}),
      agent: c.actor,
    },
    sources: [
      {
        id: `run-${c.runId}-${c.runAttempt}`,
        type: 'ci',
        uri: runUrl(c),
        // The run itself is observed first-hand; what it proves is up to the policy.
        confidence: 1,
        content: `GitHub Actions run ${c.runId} attempt ${c.runAttempt} of workflow "${c.workflow}", job ${c.job}, triggered by ${c.eventName} from ${c.actor} at ${commit}`,
      },
    ],
  };
}

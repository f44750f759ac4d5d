import { renderWithoutReceipt } from './check-run.js';
import { GateSteps, githubSubmitter, type GateDeps, type Installation } from './gate.js';
import { loadCi, loadPullRequest, type RepoRef } from './github-evidence.js';
import { buildMergeGroupClaim, type MergeGroupMember } from './merge-group-claim.js';
import { mergeGroupMember, receiptIdsOfChecks, recordedMergeGroup } from './merge-queue.js';
import { CONFIG_PATH } from './repo-config.js';

/** A merge group as a signed merge_group delivery names it. */
export interface MergeGroupRef {
  headSha: string;
  numbers: number[];
  baseRef: string;
}

/**
 * The merge-group flow (merge queue): the current receipts of the group's pull requests and
 * the CI of its head, built into a claim (merge-group-claim.ts), evaluated and reported as a
 * check run on the group's head commit.
 */
export class MergeGroupFlow {
  private readonly steps: GateSteps;

  constructor(private readonly deps: GateDeps) {
    this.steps = new GateSteps(deps);
  }

  /** A merge group at its head commit, judged on the merged result. */
  async evaluate(installation: Installation, ref: RepoRef, group: MergeGroupRef): Promise<void> {
    const { octokit } = installation;
    const baseRef = group.baseRef.replace(/^refs\/heads\//, '');
    const repository = `${ref.owner}/${ref.repo}`;
    const loaded = await this.steps.loadConfig(octokit, ref, baseRef);
    const check = await this.steps.startCheck(
      octokit,
      ref,
      group.headSha,
      loaded.ok ? loaded.config.check_name : undefined,
    );
    await this.steps.finish(installation, ref, check, { decidable: false }, async () => {
      if (!loaded.ok) {
        return renderWithoutReceipt('failure', `Invalid ${CONFIG_PATH}`, loaded.problem);
      }
      const ci = await loadCi(octokit, ref, group.headSha, this.deps.appId);
      const members: MergeGroupMember[] = [];
      for (const number of group.numbers) {
        const pr = await loadPullRequest(octokit, ref, number);
        const { headSha, url } = pr.facts;
        const entry = await this.currentEntry(repository, number, headSha, installation.id);
        members.push(mergeGroupMember({ number, headSha, url }, entry));
      }
      const claim = buildMergeGroupClaim(
        {
          repository,
          headSha: group.headSha,
          baseRef,
          members,
          ci,
          host: this.deps.host,
          baseUrl: this.deps.baseUrl,
        },
        loaded.config,
      );
      return this.steps.evaluate(installation, claim, 'This merge group', loaded.config.reviewers);
    });
  }

  /**
   * Evaluates a merge group again (its CI completed, or someone asked), but only one this
   * installation evaluated before from a signed merge_group delivery: its base and members
   * are read from that receipt, never from a branch name anyone can choose. Answers false
   * when the commit is no such group.
   */
  async reevaluate(installation: Installation, ref: RepoRef, headSha: string): Promise<boolean> {
    const { data } = await installation.octokit.rest.checks.listForRef({
      ...ref,
      ref: headSha,
      app_id: this.deps.appId,
      per_page: 100,
    });
    const receiptIds = receiptIdsOfChecks(data.check_runs, this.deps.appId);
    const group = recordedMergeGroup(await this.deps.queries.getMany(receiptIds), headSha, {
      repository: `${ref.owner}/${ref.repo}`,
      appId: this.deps.appId,
      installationId: installation.id,
    });
    if (!group) return false;
    await this.evaluate(installation, ref, { headSha, ...group });
    return true;
  }

  /** The pull request's receipt at `headSha` in this installation's scope, or null. */
  private async currentEntry(
    repository: string,
    number: number,
    headSha: string,
    installationId: number,
  ) {
    // Only this installation's own receipts: no API key can write in its scope.
    const scope = githubSubmitter(this.deps.appId, installationId).scope;
    const recent = await this.deps.queries.pullRequestReceiptsOf(
      scope,
      repository,
      String(number),
      100,
    );
    return recent.find((entry) => entry.receipt.subject.commit === headSha) ?? null;
  }
}

import * as core from '@actions/core';
import { context } from '@actions/github';
import type { WorkflowContext } from './claim.js';
import { readInputs } from './inputs.js';
import { run } from './main.js';

// The entry point of the bundle: inputs read into a typed object, one run, one setFailed.

function workflowContext(): WorkflowContext {
  const pr = context.payload.pull_request;
  return {
    repository: `${context.repo.owner}/${context.repo.repo}`,
    eventName: context.eventName,
    sha: context.sha,
    ref: context.ref,
    actor: context.actor,
    workflow: context.workflow,
    job: context.job,
    action: context.action,
    runId: context.runId,
    runAttempt: context.runAttempt,
    serverUrl: context.serverUrl,
    pullRequest: pr
      ? {
          number: pr.number,
          headSha: String(pr.head?.sha ?? context.sha),
          headRef: String(pr.head?.ref ?? ''),
          title: typeof pr.title === 'string' ? pr.title : null,
        }
      : null,
  };
}

async function main(): Promise<void> {
  try {
    const inputs = readInputs((name) => core.getInput(name), core.setSecret, process.env);
    await run(inputs, {
      info: core.info,
      warning: core.warning,
      setOutput: core.setOutput,
      appendSummary: async (markdown) => {
        // Outside a runner (a local try-out) there is no summary file to append to.
        if (process.env.GITHUB_STEP_SUMMARY) await core.summary.addRaw(markdown).write();
      },
      context: workflowContext(),
      http: {
        fetch: globalThis.fetch,
        sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
        random: Math.random,
        log: core.info,
      },
    });
  } catch (error) {
    core.setFailed(error instanceof Error ? error.message : String(error));
  }
}

await main();

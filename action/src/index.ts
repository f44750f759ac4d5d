import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as core from '@actions/core';
import { context } from '@actions/github';
import type { WorkflowContext } from './claim.js';
import { readInputs } from './inputs.js';
import { runWith } from './main.js';

// The entry point of the bundle: inputs read into a typed object, one run, one setFailed.
// `run()` takes no arguments, as @github/local-action and the typescript-action template call
// it: it reads its own inputs and context. The runner executes this file (node dist/index.js)
// and it runs itself; imported, by local-action, it only exports run().

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

/** One use of the Action: its inputs, the workflow context and @actions/core's outputs. */
export async function run(): Promise<void> {
  try {
    const inputs = readInputs((name) => core.getInput(name), core.setSecret, process.env);
    await runWith(inputs, {
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

/** True when Node was started on this file (the runner), not when it is imported. */
function startedOnThisFile(): boolean {
  const started = process.argv[1];
  if (!started) return false;
  try {
    return realpathSync(started) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (startedOnThisFile()) await run();

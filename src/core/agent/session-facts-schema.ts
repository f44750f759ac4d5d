import { z } from 'zod';
import { MAX_ID_CHARS } from '../limits.js';
import { HARNESS_NAME } from './tool-call-schema.js';

// What a pull request's claim says of the agent sessions that made its commits (contract §10,
// §12), for the `agent_session` requirement. The App computes these from the session store
// (docs/GITHUB_APP.md, "Agent sessions"); they are signed with the claim so that replay
// reproduces the rule. Bounds sit beside the claim's others and are listed in docs/POLICIES.md.

/** A git commit id: SHA-1 (40 hex digits) or SHA-256 (64), lower case. */
export const GIT_COMMIT = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

/** Commits of one pull request the facts name: GitHub lists at most 250 of them. */
export const MAX_SESSION_COMMITS = 250;
/** Sessions one claim lists; more make the facts incomplete, and the rule fail closed. */
export const MAX_AGENT_SESSIONS = 50;

export const gitCommitSchema = z
  .string()
  .regex(GIT_COMMIT, { error: 'must be a commit id: 40 or 64 lower-case hex digits' });

const count = () => z.number().int().nonnegative();

/** One agent-gate session that reported one of the change's commits as its repository's HEAD. */
export const agentSessionFactSchema = z.strictObject({
  id: z.string().min(1, { error: 'must not be empty' }).max(MAX_ID_CHARS),
  harness: z.string().regex(HARNESS_NAME, { error: 'must be a harness name' }),
  /** Contract §12: every outcome allowed, no ran_without_allow, no ALLOWED call left unreported. */
  covered: z.boolean(),
  allowed: count(),
  blocked: count(),
  escalated: count(),
  outcomes: count(),
  ran_without_allow: count(),
  missing_outcomes: count(),
  /** ESCALATED decisions no disposition has decided yet. */
  pending_escalations: count(),
  /** The change's commits this session reported. */
  commits: z.array(gitCommitSchema).min(1).max(MAX_SESSION_COMMITS),
});

export type AgentSessionFact = z.infer<typeof agentSessionFactSchema>;

/** `action.agent_sessions`, `action.unsessioned_commits` and `action.agent_sessions_incomplete`. */
export const agentSessionFactsShape = {
  /** The sessions that reported the change's commits, by first commit reported. */
  agent_sessions: z.array(agentSessionFactSchema).max(MAX_AGENT_SESSIONS).optional(),
  /** The change's commits no session reported. */
  unsessioned_commits: z.array(gitCommitSchema).max(MAX_SESSION_COMMITS).optional(),
  /**
   * True when the facts are not the whole story (more commits than GitHub lists, more sessions
   * than a claim holds, or the lookup failed): the `agent_session` requirement then fails.
   */
  agent_sessions_incomplete: z.boolean().optional(),
};

/** `action.git_head`: the repository's HEAD the harness reported after a call (an outcome's claim). */
export const gitHeadShape = { git_head: gitCommitSchema.optional() };

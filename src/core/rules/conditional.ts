import type { Approval, ClaimAction, ClaimInput } from '../claim-schema.js';
import { parseCommandLine, type CommandLine } from '../agent/command-line.js';
import {
  type CommandPattern,
  compileCommandPattern,
  matchesCommand,
  placeOf,
} from '../agent/command-pattern.js';
import type { ToolSummary } from '../agent/tool-call-schema.js';
import { pathOutside } from '../agent/tool-paths.js';
import { compiledOnce, GlobBudget, GlobBudgetExhausted, globMatcher } from './glob.js';
import type { ConditionalRule, RuleConditions, RuleRequirements } from './conditional-schema.js';
import { agentSessionCheck } from './agent-session.js';
import { THRESHOLD_RULES, type RuleCheck, type RuleContext } from './threshold-rules.js';

// Globs (./glob.ts): picomatch's dialect with `dot` on, so that `*` and `**` also match names
// starting with a dot (a `paths: infra/**` rule must not miss `infra/.terraform.lock.hcl`),
// matched in linear time against one step budget per evaluation. As in a GitHub workflow's
// `paths` filter, a glob starting with `!` excludes.

/**
 * Steps (positions advanced per character) the globs of one evaluation may take: about 0.4 s
 * of matching. 3,000 paths against four globs take under half a million; past the budget, the
 * rule being evaluated, and every later one that matches a glob, fail closed. The count
 * depends only on the claim and the config, so replay reaches the same result.
 */
export const GLOB_STEP_BUDGET = 20_000_000;

/**
 * Steps the conditions of a claim's own rules (policyConfig.rules, attacker-controlled and
 * written per request) may take, measured before anything is evaluated: about 40 ms here, so
 * that with the evaluation and its replay a request spends well under 200 ms on them. About
 * 3,000 ordinary paths against a couple of globs; past it the request is refused
 * (`rule_budget_exceeded`) instead of blocking the event loop.
 */
export const REQUEST_RULE_STEP_BUDGET = 500_000;

/**
 * Whether matching the conditions of `rules` against the claim stays within `limit` steps.
 * Run on a claim's own rules before evaluation; pure, like the rest of the evaluation.
 */
export function conditionsWithinBudget(
  rules: readonly ConditionalRule[],
  claim: Pick<ClaimInput, 'action'>,
  limit: number,
): boolean {
  const budget = new GlobBudget(limit);
  try {
    for (const rule of rules) unmatchedCondition(rule.if, claim.action, budget);
  } catch (error) {
    if (error instanceof GlobBudgetExhausted) return false;
    throw error;
  }
  return !budget.exhausted;
}

/** Conclusions that satisfy a required check, as GitHub's required status checks count them. */
const PASSING_CONCLUSIONS: ReadonlySet<string> = new Set(['success', 'neutral', 'skipped']);

/** Permissions below this never count as an approval when the claim states one. */
const PERMISSION_RANK: Record<string, number> = {
  admin: 5,
  maintain: 4,
  write: 3,
  triage: 2,
  read: 1,
  none: 0,
};
const MIN_PERMISSION = PERMISSION_RANK.write!;

// Reasons name at most this many items, then how many more, so a receipt stays small.
const SHOWN = 5;

const listOf = <T>(value: T | T[] | undefined): T[] | undefined =>
  value === undefined ? undefined : Array.isArray(value) ? value : [value];
const quote = (s: string) => JSON.stringify(s);
const some = (items: string[]): string =>
  items.length <= SHOWN
    ? items.join(', ')
    : `${items.slice(0, SHOWN).join(', ')} and ${items.length - SHOWN} more`;
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
/** Logins and team slugs compare case-insensitively, with or without a leading "@". */
export const handle = (s: string) => s.trim().replace(/^@/, '').toLowerCase();

/**
 * Evaluates one conditional rule (contract §10). Pure: it reads only the claim and the rule.
 * A rule that does not apply passes with a reason saying why not.
 */
export function evaluateConditionalRule(
  rule: ConditionalRule,
  claim: ClaimInput,
  context: RuleContext,
  budget: GlobBudget,
): RuleCheck {
  let unmatched: string | null;
  try {
    unmatched = unmatchedCondition(rule.if, claim.action, budget);
  } catch (error) {
    if (!(error instanceof GlobBudgetExhausted)) throw error;
    return {
      passed: false,
      reason: `fails closed: matching its globs took more than the evaluation's ${GLOB_STEP_BUDGET} steps`,
    };
  }
  if (unmatched !== null) return { passed: true, reason: `does not apply: ${unmatched}` };
  const checks = requirementChecks(rule, claim, context);
  const failed = checks.filter((c) => !c.passed);
  const shown = failed.length > 0 ? failed : checks;
  return {
    passed: failed.length === 0,
    reason: `applies; ${shown.map((c) => c.reason).join('; ')}`,
  };
}

/** Why the rule does not apply (the first condition, in schema order, that does not match), or null. */
function unmatchedCondition(
  conditions: RuleConditions,
  action: ClaimAction | undefined,
  budget: GlobBudget,
): string | null {
  const exact = (
    name: string,
    wanted: string[] | undefined,
    actual: string | undefined,
    fold: boolean,
  ): string | null => {
    if (!wanted) return null;
    if (actual === undefined) return `the claim has no ${name}`;
    const norm = (s: string) => (fold ? s.trim().toLowerCase() : s);
    return wanted.some((w) => norm(w) === norm(actual))
      ? null
      : `${name} ${quote(actual)} is not ${wanted.map(quote).join(' or ')}`;
  };
  const globbed = (
    name: string,
    wanted: string[] | undefined,
    actual: string | undefined,
    nocase: boolean,
  ): string | null => {
    if (!wanted) return null;
    if (actual === undefined || actual === '') return `the claim has no ${name}`;
    return globMatcher(wanted, nocase)(actual, budget)
      ? null
      : `${name} ${quote(actual)} matches none of ${wanted.join(', ')}`;
  };
  const anyOf = (
    name: string,
    wanted: string[] | undefined,
    actual: string[] | undefined,
    fold: boolean,
  ): string | null => {
    if (!wanted) return null;
    const norm = (s: string) => (fold ? s.toLowerCase() : s);
    const have = new Set((actual ?? []).map(norm));
    return wanted.some((w) => have.has(norm(w)))
      ? null
      : `${name} holds none of ${wanted.join(', ')}`;
  };

  return (
    exact('action_type', listOf(conditions.action_type), action?.action_type, false) ??
    exact('environment', listOf(conditions.environment), action?.environment, true) ??
    exact('target_system', listOf(conditions.target_system), action?.target_system, true) ??
    globbed('repository', listOf(conditions.repository), action?.repository, true) ??
    globbed('branch', listOf(conditions.branch), action?.branch, false) ??
    globbed('agent', listOf(conditions.agent), action?.agent, true) ??
    globbed('author', listOf(conditions.author), action?.author, true) ??
    anyOf('labels', listOf(conditions.labels), action?.labels, true) ??
    anyOf('risk_scope', listOf(conditions.risk_scope), action?.risk_scope, false) ??
    pathsUnmatched(listOf(conditions.paths), action, budget) ??
    onlyPathsUnmatched(listOf(conditions.only_paths), action, budget) ??
    toolUnmatched(conditions, action, budget, globbed)
  );
}

// Conditions on tool calls (contract §12) read the signed summary only, so that replay
// reproduces them. A summary marked incomplete matches every one of them: what it does not
// show may be what the rule is about.

type Globbed = (
  name: string,
  wanted: string[] | undefined,
  actual: string | undefined,
  nocase: boolean,
) => string | null;

/**
 * The commands of a command line, read once per line text (a pure function of it), so an
 * evaluation and its replay read it once. A few lines only: each may hold thousands of words.
 */
const parsedLines = new Map<string, CommandLine>();
const MAX_PARSED_LINES = 64;
const commandsOf = (command: string): CommandLine =>
  compiledOnce(parsedLines, command, () => parseCommandLine(command), MAX_PARSED_LINES);

/** A URL's host, lower-case, or '' when it has none that can be read. */
function hostOf(url: string): string {
  try {
    return new URL(url).hostname
      .toLowerCase()
      .replace(/\.$/, '')
      .replace(/^\[(.*)\]$/, '$1');
  } catch {
    return '';
  }
}

/**
 * The longest pattern a reason quotes whole; a longer one is cut, ending in `...` (ASCII: a
 * reason is hashed with the policy's text in the replay hash, and one character beyond
 * Latin-1 makes the whole text slower to hash).
 */
const MAX_QUOTED_PATTERN = 120;

/**
 * A rule's command patterns as the reason of a call none matches names them: the first,
 * quoted, and how many others. Every tool call's receipt carries the reason of every rule
 * that does not apply to it, and the patterns themselves are in the policy its config hash
 * pins; quoting them all made a receipt of the built-in agent policy several kilobytes longer.
 */
function quotedPatterns(patterns: string[]): string {
  const first = patterns[0]!;
  const shown = quote(
    first.length <= MAX_QUOTED_PATTERN ? first : `${first.slice(0, MAX_QUOTED_PATTERN - 3)}...`,
  );
  const others = patterns.length - 1;
  return others === 0 ? shown : `${shown} or ${others} other pattern${others === 1 ? '' : 's'}`;
}

// A rule's command patterns compiled, and as its reason quotes them, made once per rule: under
// a policy applied as it is, every tool call meets the same conditions (which are never changed).
const rulePatterns = new WeakMap<RuleConditions, { compiled: CommandPattern[]; quoted: string }>();
function commandPatterns(conditions: RuleConditions) {
  let found = rulePatterns.get(conditions);
  if (found === undefined) {
    const patterns = listOf(conditions.command)!;
    found = { compiled: patterns.map(compileCommandPattern), quoted: quotedPatterns(patterns) };
    rulePatterns.set(conditions, found);
  }
  return found;
}

function toolUnmatched(
  conditions: RuleConditions,
  action: ClaimAction | undefined,
  budget: GlobBudget,
  globbed: Globbed,
): string | null {
  const tool = action?.tool;
  const cwd = action?.session?.cwd;
  const onTool = (wanted: unknown, check: (summary: ToolSummary) => string | null) => {
    if (wanted === undefined) return null;
    if (!tool) return 'the claim has no tool call';
    if (tool.summary.incomplete) return null;
    return check(tool.summary);
  };
  const commands = listOf(conditions.command);
  const toolPaths = listOf(conditions.tool_paths);
  const urls = listOf(conditions.urls);
  return (
    (conditions.tool !== undefined && !tool
      ? 'the claim has no tool call'
      : globbed('tool', listOf(conditions.tool), tool?.name, true)) ??
    onTool(commands, (summary) => {
      if (summary.command === undefined) return 'the call has no command';
      const parsed = commandsOf(summary.command);
      if (parsed.opaque) return null;
      const { compiled, quoted } = commandPatterns(conditions);
      const place = placeOf(parsed.cd, cwd);
      const hit = parsed.commands.some((words) =>
        compiled.some((pattern) => matchesCommand(pattern, words, place, budget)),
      );
      return hit ? null : `no command of the call matches ${quoted}`;
    }) ??
    onTool(toolPaths, (summary) => {
      const paths = summary.paths ?? [];
      if (paths.length === 0) return 'the call has no paths';
      const matches = globMatcher(toolPaths!, false);
      return paths.some((path) => matches(path, budget))
        ? null
        : `no path of the call matches ${toolPaths!.join(', ')}`;
    }) ??
    onTool(conditions.outside_project, (summary) => {
      const paths = summary.paths ?? [];
      if (paths.length === 0) return 'the call has no paths';
      const outside = paths.filter((path) => pathOutside(path, cwd, false));
      if (conditions.outside_project) {
        return outside.length > 0 ? null : 'every path of the call is inside the project';
      }
      return outside.length === 0
        ? null
        : `${plural(outside.length, 'path')} of the call outside the project (${some(outside.map(quote))})`;
    }) ??
    onTool(urls, (summary) => {
      const hosts = (summary.urls ?? []).map(hostOf);
      if (hosts.length === 0) return 'the call has no URLs';
      // A URL whose host cannot be read may name any host.
      if (hosts.includes('')) return null;
      const matches = globMatcher(urls!, true);
      return hosts.some((host) => matches(host, budget))
        ? null
        : `no URL host of the call matches ${urls!.join(', ')}`;
    }) ??
    (conditions.mcp_server !== undefined && !tool
      ? 'the claim has no tool call'
      : globbed('mcp_server', listOf(conditions.mcp_server), tool?.summary.mcp_server, true)) ??
    sessionUnmatched(conditions.session, action, globbed)
  );
}

function sessionUnmatched(
  wanted: RuleConditions['session'],
  action: ClaimAction | undefined,
  globbed: Globbed,
): string | null {
  if (!wanted) return null;
  const session = action?.session;
  if (!session) return 'the claim has no session';
  const harnesses = listOf(wanted.harness);
  if (harnesses && !harnesses.includes(session.harness)) {
    return `session harness ${quote(session.harness)} is not ${harnesses.map(quote).join(' or ')}`;
  }
  return (
    globbed('session id', listOf(wanted.id), session.id, false) ??
    globbed('session cwd', listOf(wanted.cwd), session.cwd, false)
  );
}

function pathsUnmatched(
  globs: string[] | undefined,
  action: ClaimAction | undefined,
  budget: GlobBudget,
): string | null {
  if (!globs) return null;
  // Fail closed: a path the claim could not list may be one the rule is about.
  if (action?.changed_paths_incomplete) return null;
  const matches = globMatcher(globs, false);
  return (action?.changed_paths ?? []).some((path) => matches(path, budget))
    ? null
    : `no changed path matches ${globs.join(', ')}`;
}

function onlyPathsUnmatched(
  globs: string[] | undefined,
  action: ClaimAction | undefined,
  budget: GlobBudget,
): string | null {
  if (!globs) return null;
  // Fail closed: "only these paths" cannot be known of an incomplete list, nor of no list.
  if (action?.changed_paths_incomplete) return 'the changed paths are incomplete';
  const paths = action?.changed_paths ?? [];
  if (paths.length === 0) return 'the claim lists no changed paths';
  const matches = globMatcher(globs, false);
  const outside = paths.filter((path) => !matches(path, budget));
  return outside.length === 0
    ? null
    : `${plural(outside.length, 'changed path')} outside ${globs.join(', ')} (${some(outside.map(quote))})`;
}

/** Every requirement's result, in a fixed order: never, approvals, checks, source types, agent session, thresholds. */
function requirementChecks(
  rule: ConditionalRule,
  claim: ClaimInput,
  context: RuleContext,
): RuleCheck[] {
  const require = rule.require;
  const checks: RuleCheck[] = [];
  if (require.never) {
    checks.push({
      passed: false,
      reason: `never allowed${rule.description ? `: ${rule.description}` : ''}`,
    });
  }
  if (require.approvals) checks.push(...approvalChecks(require.approvals, claim.action));
  if (require.checks) checks.push(checksCheck(require.checks, claim.action));
  if (require.source_types) checks.push(sourceTypesCheck(require.source_types, context));
  if (require.agent_session) checks.push(agentSessionCheck(require.agent_session, claim.action));
  for (const rule of THRESHOLD_RULES) {
    const value = (require as Record<string, unknown>)[rule.field];
    if (value === undefined) continue;
    const result = rule.evaluate(context, value);
    checks.push({ passed: result.passed, reason: `${rule.name}: ${result.reason}` });
  }
  return checks;
}

/**
 * Who may approve: a person (kind `User`, the default) who is not the action's agent, human
 * operator, author or a committer (separation of duties), with at least write permission when
 * the claim states one. Distinct logins, in claim order.
 */
function eligibleApprovers(action: ClaimAction | undefined): {
  eligible: Approval[];
  refused: string[];
} {
  const roles = new Map<string, string>();
  const mark = (login: string | undefined, role: string) => {
    if (login && !roles.has(handle(login))) roles.set(handle(login), role);
  };
  mark(action?.agent, 'the agent');
  mark(action?.human_operator, 'the human operator');
  mark(action?.author, 'the author');
  for (const committer of action?.committers ?? []) mark(committer, 'a committer');

  const eligible: Approval[] = [];
  const refused: string[] = [];
  const seen = new Set<string>();
  for (const approval of action?.approvals ?? []) {
    const login = handle(approval.user);
    if (seen.has(login)) continue;
    seen.add(login);
    const role = roles.get(login);
    if (approval.kind !== undefined && approval.kind !== 'User') {
      refused.push(`${approval.user} (${approval.kind}, not a person)`);
    } else if (role) {
      refused.push(`${approval.user} (${role})`);
    } else if (
      approval.permission !== undefined &&
      PERMISSION_RANK[approval.permission]! < MIN_PERMISSION
    ) {
      refused.push(`${approval.user} (${approval.permission} permission)`);
    } else {
      eligible.push(approval);
    }
  }
  return { eligible, refused };
}

/** Whether an approver is a given owner: `@user`, or `@org/team` through the approver's teams. */
const isOwner = (approval: Approval, owner: string): boolean => {
  // An e-mail owner cannot be matched to a login: it never counts.
  if (owner.includes('@', 1)) return false;
  const wanted = handle(owner);
  return wanted.includes('/')
    ? (approval.teams ?? []).some((team) => handle(team) === wanted)
    : handle(approval.user) === wanted;
};

function approvalChecks(
  requirement: NonNullable<RuleRequirements['approvals']>,
  action: ClaimAction | undefined,
): RuleCheck[] {
  const { count } = requirement;
  const from = requirement.from ?? {};
  const { eligible, refused } = eligibleApprovers(action);
  const notCounted = refused.length ? ` (not counted: ${some(refused)})` : '';
  const checks: RuleCheck[] = [];

  const named = [...(from.users ?? []), ...(from.teams ?? [])];
  if (named.length > 0 || !from.code_owners) {
    const counted = eligible.filter(
      (approval) =>
        named.length === 0 ||
        (from.users ?? []).some((user) => handle(user) === handle(approval.user)) ||
        (from.teams ?? []).some((team) =>
          isOwner(approval, team.includes('/') ? team : `${team}/`),
        ),
    );
    const who = named.length ? ` from ${named.join(', ')}` : '';
    checks.push({
      passed: counted.length >= count,
      reason: `${plural(counted.length, 'approval')}${who}${counted.length ? ` (${some(counted.map((a) => a.user))})` : ''}, ${count} required${counted.length >= count ? '' : notCounted}`,
    });
  }

  if (from.code_owners) {
    if (action?.changed_paths_incomplete) {
      checks.push({
        passed: false,
        reason:
          'code owner approval: the changed paths are incomplete, so unlisted paths cannot be checked',
      });
    } else {
      const owned = (action?.code_owners ?? []).filter((entry) => entry.owners.length > 0);
      const short = owned.filter(
        (entry) =>
          eligible.filter((approval) => entry.owners.some((owner) => isOwner(approval, owner)))
            .length < count,
      );
      checks.push({
        passed: short.length === 0,
        reason:
          short.length === 0
            ? `code owner approval: ${plural(owned.length, 'owned path')}, each with ${count} approving owner${count === 1 ? '' : 's'}`
            : `code owner approval: ${plural(short.length, 'path')} without ${count} approving owner${count === 1 ? '' : 's'}: ${some(short.map((e) => `${e.path} (${e.owners.join(' ')})`))}${notCounted}`,
      });
    }
  }
  return checks;
}

function checksCheck(names: string[], action: ClaimAction | undefined): RuleCheck {
  const problems: string[] = [];
  for (const name of names) {
    // Every run of the name must pass: the claim's builder lists the latest run of each check,
    // and a failed run beside a passing one fails closed.
    const runs = (action?.checks ?? []).filter((check) => check.name === name);
    if (runs.length === 0) problems.push(`${name} (missing)`);
    else {
      const bad = runs.find(
        (run) => run.status !== 'completed' || !PASSING_CONCLUSIONS.has(run.conclusion ?? ''),
      );
      if (bad)
        problems.push(
          `${name} (${bad.status === 'completed' ? (bad.conclusion ?? 'no conclusion') : bad.status})`,
        );
    }
  }
  return problems.length === 0
    ? { passed: true, reason: `checks passed: ${some(names)}` }
    : { passed: false, reason: `checks not passed: ${some(problems)}` };
}

function sourceTypesCheck(types: string[], context: RuleContext): RuleCheck {
  const missing = types.filter((type) => !context.types.has(type));
  return missing.length === 0
    ? { passed: true, reason: `admissible source types present: ${types.join(', ')}` }
    : { passed: false, reason: `admissible source types missing: ${missing.join(', ')}` };
}

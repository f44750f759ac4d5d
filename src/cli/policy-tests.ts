import { hashCanonical, parseStrictJson } from '@svc/verify';
import { parse as parseYaml, YAMLParseError } from 'yaml';
import { z } from 'zod';
import { createPolicySchema } from '../api/schemas/policies.js';
import { claimInputSchema, type ClaimInput } from '../core/claim-schema.js';
import { isSvcError } from '../core/errors.js';
import { effectivePolicy, policyNameOf as requestedPolicyName } from '../core/effective-policy.js';
import { evaluateClaim } from '../core/evaluation.js';
import { builtinPolicy } from '../core/policies.js';
import { ADMISSIBILITY_STATUSES, VERDICTS } from '../core/receipt-schema.js';
import {
  DEFAULT_REPO_CONFIG,
  NO_FILE_REPO_CONFIG,
  isAgent,
  repoConfigSchema,
  type RepoConfig,
} from '../github/repo-config.js';
import { buildPullRequestClaim, type PullRequestEvidence } from '../github/pull-request-claim.js';
import type { PolicyRecord, PolicyStore } from '../ports/policy-store.js';
import { PolicyService, type PolicyView } from '../services/policies.js';

/**
 * The pure parts of `svc policy check` and `svc policy test`: parsing policy files, cases and
 * recorded pull requests, evaluating a case the way the service evaluates a claim, and
 * comparing the outcome with what the case expects. No file system and no process here: the
 * commands (policy-commands.ts) read the files and print.
 */

export type Parsed<T> = { ok: true; value: T } | { ok: false; problems: string[] };

const ok = <T>(value: T): Parsed<T> => ({ ok: true, value });
const fail = <T>(...problems: string[]): Parsed<T> => ({ ok: false, problems });

const pathOf = (path: readonly PropertyKey[]) => (path.length ? path.map(String).join('.') : '');

/** `<path>: <message>` for each issue, the form the API's 400s take, under an optional prefix. */
export function issuesOf(error: z.ZodError, prefix = ''): string[] {
  return error.issues.map((issue) => {
    const path = [prefix, pathOf(issue.path)].filter(Boolean).join('.');
    return `${path || '(root)'}: ${issue.message}`;
  });
}

/**
 * A JSON or YAML document. `.json` files are read as the API reads a request body (strict JSON:
 * duplicate keys, unsafe integers refused); anything else as YAML 1.2, whose core schema reads
 * JSON too and, like strict JSON, refuses duplicate keys.
 */
export function parseDocument(text: string, fileName: string): Parsed<unknown> {
  if (/\.json$/i.test(fileName)) {
    try {
      return ok(parseStrictJson(text));
    } catch (error) {
      return fail(`(root): ${(error as Error).message.replace(/^Request body is /, '')}`);
    }
  }
  try {
    return ok(parseYaml(text, { uniqueKeys: true, logLevel: 'error' }) as unknown);
  } catch (error) {
    if (error instanceof YAMLParseError) {
      const [line, column] = error.linePos?.[0]
        ? [error.linePos[0].line, error.linePos[0].col]
        : [];
      const what = error.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
      return fail(
        `(root): not valid YAML${line ? ` (line ${line}, column ${column})` : ''}: ${what}`,
      );
    }
    return fail(`(root): not valid YAML: ${(error as Error).message}`);
  }
}

export const KINDS = ['policy', 'repo-config'] as const;
export type Kind = (typeof KINDS)[number];

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The members an object schema accepts, also when it is refined or transformed. */
function membersOf(schema: z.ZodType): string[] {
  const def = schema._zod.def as { type: string; shape?: object; in?: z.ZodType };
  if (def.type === 'object' && def.shape) return Object.keys(def.shape);
  return def.type === 'pipe' && def.in ? membersOf(def.in) : [];
}

// The members that tell the two apart, read off the schemas themselves: a member both accept
// decides nothing.
const POLICY_MEMBERS = membersOf(createPolicySchema);
const REPO_MEMBERS = membersOf(repoConfigSchema);
const ONLY_POLICY = POLICY_MEMBERS.filter((m) => !REPO_MEMBERS.includes(m));
const ONLY_REPO = REPO_MEMBERS.filter((m) => !POLICY_MEMBERS.includes(m));

/**
 * Whether a document is a policy (the body of POST /v1/policies) or a repository's
 * `.github/svc.yml`, by its members; a file named `svc.yml` (or `.yaml`) that has members of
 * neither, such as an empty one, is a repository config. Null when it cannot be told.
 */
export function detectKind(value: unknown, fileName: string): Kind | { problem: string } {
  const named = /(^|[/\\])svc\.ya?ml$/i.test(fileName);
  const members = isPlainObject(value) ? Object.keys(value) : [];
  const policy = members.filter((m) => ONLY_POLICY.includes(m));
  const repo = members.filter((m) => ONLY_REPO.includes(m));
  if (policy.length > 0 && repo.length > 0) {
    return {
      problem: `it has members of a policy (${policy.join(', ')}) and of .github/svc.yml (${repo.join(', ')}); say which it is with --kind policy|repo-config`,
    };
  }
  if (policy.length > 0) return 'policy';
  if (repo.length > 0 || named) return 'repo-config';
  return {
    problem: `it has none of the members of a policy (${ONLY_POLICY.join(', ')}) or of .github/svc.yml (${ONLY_REPO.join(', ')}); say which it is with --kind policy|repo-config`,
  };
}

/** Custom policies held in memory: what the tested file (and --policy-file) define. */
class MemoryPolicies implements PolicyStore {
  private readonly records = new Map<string, PolicyRecord>();
  private readonly keyOf = (owner: string | null, name: string) => `${owner ?? ''}\u0000${name}`;

  insert(record: PolicyRecord): Promise<'created' | 'exists'> {
    const key = this.keyOf(record.owner, record.name);
    if (this.records.has(key)) return Promise.resolve('exists');
    this.records.set(key, record);
    return Promise.resolve('created');
  }
  get(owner: string | null, name: string): Promise<PolicyRecord | null> {
    return Promise.resolve(this.records.get(this.keyOf(owner, name)) ?? null);
  }
  listVisible(owner: string | null): Promise<PolicyRecord[]> {
    return Promise.resolve(
      [...this.records.values()].filter((r) => r.owner === null || r.owner === owner),
    );
  }
  listAll(): Promise<PolicyRecord[]> {
    return Promise.resolve([...this.records.values()]);
  }
  delete(owner: string | null, name: string): Promise<boolean> {
    return Promise.resolve(this.records.delete(this.keyOf(owner, name)));
  }
}

// Created policies get this time; nothing the tests or the check print depends on it.
const EPOCH_CLOCK = { now: () => 0 };

/**
 * What policy files define, as the service would hold them: each created as an operator's
 * shared policy (`svc policies create`), so both API keys and the GitHub App may name it.
 */
export class PolicySet {
  readonly service = new PolicyService({ policies: new MemoryPolicies(), clock: EPOCH_CLOCK });

  /** Validates a policy file and creates it, or names what is wrong with it. */
  async add(value: unknown): Promise<Parsed<PolicyView>> {
    const parsed = createPolicySchema.safeParse(value);
    if (!parsed.success) return fail(...issuesOf(parsed.error));
    if (builtinPolicy(parsed.data.name)) {
      return fail(
        `name: "${parsed.data.name}" is a built-in policy; POST /v1/policies would answer 409 policy_conflict`,
      );
    }
    try {
      return ok(await this.service.create(parsed.data, null));
    } catch (error) {
      if (isSvcError(error)) return fail(`name: ${error.message}`);
      throw error;
    }
  }
}

/** What `svc policy test` evaluates cases under. */
export type Subject =
  | { kind: 'policy' | 'builtin'; policies: PolicySet; view: PolicyView }
  | {
      kind: 'repo-config';
      policies: PolicySet;
      config: RepoConfig;
      /** The named policy with the file's policyConfig applied, when it can be resolved. */
      effective: EffectiveOutcome | null;
    };

export type EffectiveOutcome =
  | { ok: true; name: string; config: Record<string, unknown>; config_hash: string }
  | { ok: false; name: string; code: string; message: string };

/**
 * No claim here comes from an API key, so none is locked: a repository config's claims are
 * the App's, whose submitter is never locked, and a policy file's are those of a key that
 * names the policy. A key locked to the policy would hold them to tighten-only overrides
 * (core/effective-policy.ts), which only the service knows of its keys.
 */
const NO_LOCK = null;

/** The policy a repository config names, with its policyConfig applied, as the App's claims get it. */
async function effectiveOfRepoConfig(
  policies: PolicySet,
  config: RepoConfig,
): Promise<EffectiveOutcome | null> {
  const name = requestedPolicyName(config, NO_LOCK);
  const policy = await policies.service.resolve(name, null);
  if (!policy) return null;
  try {
    const { config: effective } = effectivePolicy(config, NO_LOCK, policy);
    // H(effective): what the receipts of the App's claims carry as policy.config_hash.
    return { ok: true, name, config: effective, config_hash: hashCanonical(effective) };
  } catch (error) {
    if (isSvcError(error)) return { ok: false, name, code: error.code, message: error.message };
    throw error;
  }
}

/**
 * The subject of a file already parsed: a policy file (created in `policies` as a shared
 * policy) or a `.github/svc.yml`.
 */
export async function subjectOf(
  value: unknown,
  kind: Kind,
  policies: PolicySet,
): Promise<Parsed<Subject>> {
  if (kind === 'policy') {
    const view = await policies.add(value);
    return view.ok ? ok({ kind: 'policy', policies, view: view.value }) : view;
  }
  // An empty file is no configuration, as the App reads it: every default applies.
  const parsed =
    value === null || value === undefined
      ? { success: true as const, data: NO_FILE_REPO_CONFIG }
      : repoConfigSchema.safeParse(value);
  if (!parsed.success) return fail(...issuesOf(parsed.error));
  const config = parsed.data;
  return ok({
    kind: 'repo-config',
    policies,
    config,
    effective: await effectiveOfRepoConfig(policies, config),
  });
}

/** A built-in policy by name, as a subject. */
export async function builtinSubject(name: string, policies: PolicySet): Promise<Subject | null> {
  if (!builtinPolicy(name)) return null;
  return { kind: 'builtin', policies, view: await policies.service.get(name, null) };
}

/** The name of the policy the subject's claims are evaluated under. */
export const policyNameOf = (subject: Subject): string =>
  subject.kind === 'repo-config' ? requestedPolicyName(subject.config, NO_LOCK) : subject.view.name;

/** Why a subject cannot be tested, when the policy it names is unknown offline. */
export function unresolvable(subject: Subject): string | null {
  if (subject.kind !== 'repo-config' || subject.effective) return null;
  return `policy: "${policyNameOf(subject)}" is neither built in nor given with --policy-file; the service would have it as a shared policy (svc policies create), and offline its definition is needed`;
}

// ---------------------------------------------------------------------------------------------
// Cases

/** A rule's expected result. */
const RULE_RESULTS = ['pass', 'fail'] as const;
/** What the App does with a pull request by a human when `gate_humans` is false. */
export const NOT_GATED = 'NOT_GATED';

const expectSchema = z
  .strictObject({
    verdict: z.enum([...VERDICTS, NOT_GATED]).optional(),
    admissibility: z.enum(ADMISSIBILITY_STATUSES).optional(),
    /** An error code the evaluation answers instead (policy_override_refused, ...). */
    error: z.string().min(1).max(100).optional(),
    rules: z.record(z.string().min(1).max(200), z.enum(RULE_RESULTS)).optional(),
  })
  .superRefine((expect, ctx) => {
    if (expect.verdict === undefined && expect.error === undefined) {
      ctx.addIssue({
        code: 'custom',
        message: `must name a verdict (${[...VERDICTS, NOT_GATED].join(', ')}) or an error code`,
      });
    }
    if (expect.error !== undefined) {
      for (const member of ['verdict', 'admissibility', 'rules'] as const) {
        if (expect[member] !== undefined) {
          ctx.addIssue({
            code: 'custom',
            path: [member],
            message: 'an evaluation that answers an error has none',
          });
        }
      }
    }
  });

const objectSchema = z.record(z.string(), z.unknown());

const caseSchema = z
  .strictObject({
    name: z.string().min(1).max(200),
    claim: objectSchema.optional(),
    claim_file: z.string().min(1).optional(),
    pull_request: z.union([z.string().min(1), objectSchema]).optional(),
    expect: expectSchema,
  })
  .superRefine((c, ctx) => {
    const given = (['claim', 'claim_file', 'pull_request'] as const).filter(
      (m) => c[m] !== undefined,
    );
    if (given.length !== 1) {
      ctx.addIssue({
        code: 'custom',
        message: `needs exactly one of claim, claim_file or pull_request${given.length ? `; got ${given.join(', ')}` : ''}`,
      });
    }
  });

const casesFileSchema = z
  .strictObject({
    cases: z.array(caseSchema).min(1, { error: 'must hold at least 1 case' }).max(10_000),
  })
  .superRefine((file, ctx) => {
    const seen = new Set<string>();
    file.cases.forEach((c, i) => {
      if (seen.has(c.name)) {
        ctx.addIssue({
          code: 'custom',
          path: ['cases', i, 'name'],
          message: `"${c.name}" names another case too`,
        });
      }
      seen.add(c.name);
    });
  });

export type CaseExpectation = z.infer<typeof expectSchema>;

/** A case with its input read and validated: a claim, or a recorded pull request. */
export interface TestCase {
  name: string;
  input: { claim: ClaimInput } | { pullRequest: RecordedPullRequest };
  expect: CaseExpectation;
}

const login = z.string().min(1).max(100);
const time = z.iso.datetime({ offset: true, error: 'must be an ISO 8601 timestamp' });

/**
 * A pull request as the GitHub App records it for its claim builder (PullRequestEvidence of
 * src/github/pull-request-claim.ts). `agent` may be left out: it is then the author when the
 * repository config's `agents` (or the default, `*[bot]`) name it, as the App decides.
 */
const recordedPullRequestSchema = z.strictObject({
  pr: z.strictObject({
    repository: z.string().regex(/^[^/\s]+\/[^/\s]+$/, { error: 'must be owner/name' }),
    number: z.number().int().positive(),
    title: z.string().max(1024),
    url: z.string().min(1).max(2048),
    author: login,
    headSha: z.string().regex(/^[0-9a-f]{7,64}$/, { error: 'must be a commit SHA' }),
    headRef: z.string().min(1).max(256),
    baseRef: z.string().min(1).max(256),
    additions: z.number().int().min(0).default(0),
    deletions: z.number().int().min(0).default(0),
    changedFiles: z.number().int().min(0).default(0),
    updatedAt: time,
    labels: z.array(z.string().min(1).max(256)).max(100).optional(),
  }),
  ci: z
    .array(
      z.strictObject({
        name: z.string().min(1).max(256),
        kind: z.enum(['check_run', 'status']).default('check_run'),
        state: z.enum(['success', 'failure', 'pending', 'neutral']),
        url: z.string().max(2048).nullable().default(null),
        at: time.nullable().default(null),
      }),
    )
    .default([]),
  reviews: z
    .array(
      z.strictObject({
        reviewer: login,
        reviewerType: z.string().min(1).max(64),
        state: z.enum(['APPROVED', 'CHANGES_REQUESTED', 'COMMENTED', 'DISMISSED', 'PENDING']),
        commitId: z.string().min(1).max(64),
        submittedAt: time,
        url: z.string().min(1).max(2048),
        permission: z.enum(['admin', 'maintain', 'write', 'triage', 'read', 'none']).optional(),
      }),
    )
    .default([]),
  agent: login.nullable().optional(),
  humanOperator: login.nullable().default(null),
  involved: z.array(login).max(1000).default([]),
  host: z.string().min(1).max(256).default('github.com'),
  /**
   * What conditional rules read, as the GitHub App fetches it: the listed files and the pull
   * request's own count of them, the commits' logins, the base branch's CODEOWNERS text, and
   * the approvers' teams (login → `org/team` slugs) when a policy names teams.
   */
  facts: z
    .strictObject({
      files: z.strictObject({
        files: z
          .array(
            z.strictObject({
              filename: z.string().min(1).max(4096),
              previous_filename: z.string().min(1).max(4096).optional(),
              status: z.string().max(64).optional(),
            }),
          )
          .max(3000),
        total: z.number().int().min(0),
        error: z.string().max(1024).optional(),
      }),
      commits: z
        .array(z.strictObject({ author: login.nullable(), committer: login.nullable() }))
        .max(1000)
        .default([]),
      codeOwners: z
        .string()
        .max(3 * 1024 * 1024)
        .nullable()
        .default(null),
      teams: z.record(login, z.array(z.string().min(1).max(256)).max(100)).optional(),
    })
    .optional(),
});

export type RecordedPullRequest = z.infer<typeof recordedPullRequestSchema>;

/** Reads a file a case names, relative to the cases file; a problem when it cannot. */
export type ReadFile = (
  path: string,
) => { ok: true; text: string } | { ok: false; problem: string };

function readDocument(read: ReadFile, path: string, where: string): Parsed<unknown> {
  const file = read(path);
  if (!file.ok) return fail(`${where}: ${file.problem}`);
  const parsed = parseDocument(file.text, path);
  return parsed.ok
    ? parsed
    : fail(...parsed.problems.map((p) => `${where} (${path}): ${p.replace(/^\(root\): /, '')}`));
}

/** A case's claim: its claim_id may be left out (the case's name then stands in). */
function claimOf(value: Record<string, unknown>, name: string, where: string): Parsed<ClaimInput> {
  const parsed = claimInputSchema.safeParse({ claim_id: `test:${name}`, ...value });
  return parsed.success ? ok(parsed.data) : fail(...issuesOf(parsed.error, where));
}

/**
 * The cases of a cases file (a list, or an object whose `cases` is one), each with its claim
 * or recorded pull request read and validated. Every problem of every case is named at once.
 */
export function loadCases(value: unknown, read: ReadFile): Parsed<TestCase[]> {
  const file = casesFileSchema.safeParse(Array.isArray(value) ? { cases: value } : value);
  if (!file.success) return fail(...issuesOf(file.error));
  const problems: string[] = [];
  const cases: TestCase[] = [];
  file.data.cases.forEach((c, i) => {
    const at = `cases.${i}`;
    let input: Parsed<TestCase['input']>;
    if (c.claim !== undefined) {
      const claim = claimOf(c.claim, c.name, `${at}.claim`);
      input = claim.ok ? ok({ claim: claim.value }) : claim;
    } else if (c.claim_file !== undefined) {
      const doc = readDocument(read, c.claim_file, `${at}.claim_file`);
      const claim = !doc.ok
        ? doc
        : isPlainObject(doc.value)
          ? claimOf(doc.value, c.name, `${at}.claim_file (${c.claim_file})`)
          : fail<ClaimInput>(`${at}.claim_file (${c.claim_file}): must hold a claim object`);
      input = claim.ok ? ok({ claim: claim.value }) : claim;
    } else {
      const source = c.pull_request!;
      const where =
        typeof source === 'string' ? `${at}.pull_request (${source})` : `${at}.pull_request`;
      const doc =
        typeof source === 'string' ? readDocument(read, source, `${at}.pull_request`) : ok(source);
      const recorded = doc.ok ? recordedPullRequestSchema.safeParse(doc.value) : null;
      input = !doc.ok
        ? doc
        : recorded!.success
          ? ok({ pullRequest: recorded!.data })
          : fail(...issuesOf(recorded!.error, where));
    }
    if (input.ok) cases.push({ name: c.name, input: input.value, expect: c.expect });
    else problems.push(...input.problems);
  });
  return problems.length ? fail(...problems) : ok(cases);
}

// ---------------------------------------------------------------------------------------------
// Evaluation

export interface RuleOutcome {
  rule: string;
  passed: boolean;
  reason: string;
}

/** What the service would answer for a case: its decision, or the error it would refuse with. */
export type CaseOutcome =
  | {
      verdict: (typeof VERDICTS)[number] | typeof NOT_GATED;
      admissibility: (typeof ADMISSIBILITY_STATUSES)[number] | null;
      reason: string;
      admissibility_reason: string | null;
      rules: RuleOutcome[];
      policy: string;
      config_hash: string | null;
      claim_id: string | null;
    }
  | { error: string; message: string; policy: string };

/** The claim the service would receive for a case: named as it would be named. */
function claimFor(subject: Subject, input: TestCase['input']): ClaimInput | { notGated: string } {
  const repoPolicy =
    subject.kind === 'repo-config'
      ? { policy: subject.config.policy, policyConfig: subject.config.policyConfig }
      : { policy: subject.view.name };
  if ('claim' in input) {
    if (subject.kind !== 'repo-config') return { ...input.claim, policy: subject.view.name };
    // The App submits the repository's policy and policyConfig, never a claim's own.
    const rest = { ...input.claim };
    delete rest.policy;
    delete rest.policyConfig;
    return {
      ...rest,
      ...(repoPolicy.policy ? { policy: repoPolicy.policy } : {}),
      ...(repoPolicy.policyConfig ? { policyConfig: repoPolicy.policyConfig } : {}),
    };
  }
  const recorded = input.pullRequest;
  const agents =
    subject.kind === 'repo-config' ? subject.config.agents : DEFAULT_REPO_CONFIG.agents;
  const agent =
    recorded.agent !== undefined
      ? recorded.agent
      : isAgent(recorded.pr.author, agents)
        ? recorded.pr.author
        : null;
  if (subject.kind === 'repo-config' && agent === null && !subject.config.gate_humans) {
    return {
      notGated: `@${recorded.pr.author} is not one of the agents (${JSON.stringify(agents)}) and gate_humans is false: the App gives a neutral check and evaluates nothing`,
    };
  }
  const { facts, ...rest } = recorded;
  const evidence: PullRequestEvidence = {
    ...rest,
    agent,
    ...(facts && {
      facts: {
        files: facts.files,
        commits: facts.commits,
        codeOwners: facts.codeOwners,
        // The App keys memberships by the login in lower case.
        ...(facts.teams && {
          teams: new Map(Object.entries(facts.teams).map(([k, v]) => [k.toLowerCase(), v])),
        }),
      },
    }),
  };
  return buildPullRequestClaim(evidence, repoPolicy);
}

/**
 * Evaluates a case as POST /v1/evaluate would (the effective policy the service computes, from
 * the claim's named policy and its policyConfig, then the core's evaluation and replay), with
 * nothing signed and nothing written.
 */
export async function evaluateCase(subject: Subject, testCase: TestCase): Promise<CaseOutcome> {
  const built = claimFor(subject, testCase.input);
  const name = policyNameOf(subject);
  if ('notGated' in built) {
    return {
      verdict: NOT_GATED,
      admissibility: null,
      reason: built.notGated,
      admissibility_reason: null,
      rules: [],
      policy: name,
      config_hash: null,
      claim_id: null,
    };
  }
  // The service validates every claim it evaluates; a builder's claim too (gate.ts).
  const claim = claimInputSchema.safeParse(built);
  if (!claim.success) {
    return { error: 'validation_failed', message: issuesOf(claim.error).join('; '), policy: name };
  }
  try {
    const resolved = await subject.policies.service.resolve(
      requestedPolicyName(claim.data, NO_LOCK),
      null,
    );
    const policy = effectivePolicy(claim.data, NO_LOCK, resolved);
    const evaluation = evaluateClaim(claim.data, policy.config);
    return {
      verdict: evaluation.policy.verdict,
      admissibility: evaluation.admissibility.status,
      reason: evaluation.policy.reason,
      admissibility_reason: evaluation.admissibility.reason,
      rules: evaluation.policy.rules.map((r) => ({
        rule: r.rule,
        passed: r.passed,
        reason: r.reason,
      })),
      policy: policy.name,
      config_hash: evaluation.config_hash,
      claim_id: claim.data.claim_id,
    };
  } catch (error) {
    if (isSvcError(error)) return { error: error.code, message: error.message, policy: name };
    throw error;
  }
}

export interface Difference {
  /** `verdict`, `admissibility`, `error` or `rules.<name>`. */
  path: string;
  expected: string;
  actual: string;
  /** Why the actual value is what it is: the evaluation's reason. */
  detail: string;
}

/** A rule as a case names it: its receipt name, or a conditional rule's own name. */
const findRule = (rules: RuleOutcome[], name: string) =>
  rules.find((r) => r.rule === name) ?? rules.find((r) => r.rule === `rule:${name}`);

/** Everything the outcome differs in from what the case expects; empty when the case passes. */
export function diffCase(expect: CaseExpectation, outcome: CaseOutcome): Difference[] {
  if ('error' in outcome) {
    if (expect.error === outcome.error) return [];
    return [
      {
        path: expect.error !== undefined ? 'error' : 'verdict',
        expected: expect.error ?? expect.verdict!,
        actual: `error ${outcome.error}`,
        detail: outcome.message,
      },
    ];
  }
  if (expect.error !== undefined) {
    return [
      { path: 'error', expected: expect.error, actual: outcome.verdict, detail: outcome.reason },
    ];
  }
  const differences: Difference[] = [];
  if (expect.verdict !== outcome.verdict) {
    differences.push({
      path: 'verdict',
      expected: expect.verdict!,
      actual: outcome.verdict,
      detail: outcome.reason,
    });
  }
  if (expect.admissibility !== undefined && expect.admissibility !== outcome.admissibility) {
    differences.push({
      path: 'admissibility',
      expected: expect.admissibility,
      actual: outcome.admissibility ?? 'none',
      detail: outcome.admissibility_reason ?? outcome.reason,
    });
  }
  for (const [name, expected] of Object.entries(expect.rules ?? {})) {
    const rule = findRule(outcome.rules, name);
    if (!rule) {
      differences.push({
        path: `rules.${name}`,
        expected,
        actual: 'absent',
        detail: outcome.rules.length
          ? `the evaluation has no rule "${name}"; its rules: ${outcome.rules.map((r) => r.rule).join(', ')}`
          : 'the evaluation has no rules',
      });
      continue;
    }
    const actual = rule.passed ? 'pass' : 'fail';
    if (actual !== expected) {
      differences.push({ path: `rules.${name}`, expected, actual, detail: rule.reason });
    }
  }
  return differences;
}

export interface CaseResult {
  name: string;
  passed: boolean;
  expected: CaseExpectation;
  actual: CaseOutcome;
  differences: Difference[];
}

/** Runs every case, in order. */
export async function runCases(subject: Subject, cases: TestCase[]): Promise<CaseResult[]> {
  const results: CaseResult[] = [];
  for (const testCase of cases) {
    const actual = await evaluateCase(subject, testCase);
    const differences = diffCase(testCase.expect, actual);
    results.push({
      name: testCase.name,
      passed: differences.length === 0,
      expected: testCase.expect,
      actual,
      differences,
    });
  }
  return results;
}

// ---------------------------------------------------------------------------------------------
// Reports

/** How a subject is named in reports. */
export function describeSubject(subject: Subject): string {
  if (subject.kind !== 'repo-config') {
    return `${subject.kind === 'builtin' ? 'built-in ' : ''}policy "${subject.view.name}"`;
  }
  const effective = subject.effective;
  return `.github/svc.yml (policy "${policyNameOf(subject)}"${effective?.ok && subject.config.policyConfig ? ' with its policyConfig' : ''})`;
}

/** The config hash receipts of the subject carry when a claim overrides nothing. */
export function configHashOf(subject: Subject): string | null {
  if (subject.kind !== 'repo-config') return subject.view.config_hash;
  return subject.effective?.ok ? subject.effective.config_hash : null;
}

const summaryOf = (results: CaseResult[]) => {
  const passed = results.filter((r) => r.passed).length;
  return { total: results.length, passed, failed: results.length - passed };
};

/** The text report: PASS/FAIL per case, each difference under its case, a summary line last. */
export function renderResults(subject: Subject, results: CaseResult[]): string[] {
  const hash = configHashOf(subject);
  const lines = [`Testing ${describeSubject(subject)}${hash ? `, config_hash ${hash}` : ''}`];
  for (const result of results) {
    lines.push(`${result.passed ? 'PASS' : 'FAIL'}  ${result.name}`);
    for (const d of result.differences) {
      const what =
        d.path === 'verdict' || d.path === 'admissibility' || d.path === 'error'
          ? d.path
          : `rule ${d.path.slice('rules.'.length).replace(/^rule:/, '')}`;
      lines.push(`      ${what}: expected ${d.expected}, got ${d.actual}`);
      lines.push(`        ${d.detail}`);
    }
  }
  const { total, passed, failed } = summaryOf(results);
  lines.push(`${passed} passed, ${failed} failed (${total} case${total === 1 ? '' : 's'})`);
  return lines;
}

/** The `--json` report. */
export function resultsJson(subject: Subject, results: CaseResult[]) {
  return {
    policy: {
      kind: subject.kind,
      name: policyNameOf(subject),
      config_hash: configHashOf(subject),
    },
    cases: results,
    summary: summaryOf(results),
  };
}

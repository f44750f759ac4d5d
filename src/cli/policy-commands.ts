import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { BUILTIN_POLICIES } from '../core/policies.js';
import {
  builtinSubject,
  configHashOf,
  detectKind,
  describeSubject,
  KINDS,
  loadCases,
  parseDocument,
  PolicySet,
  policyNameOf,
  renderResults,
  resultsJson,
  runCases,
  subjectOf,
  unresolvable,
  type Kind,
  type Parsed,
  type ReadFile,
  type Subject,
} from './policy-tests.js';

type Out = (line: string) => void;

export const POLICY_CHECK_HELP = `svc policy check — validate a policy file or a .github/svc.yml, offline

Usage:
  svc policy check <file> [--kind policy|repo-config] [--policy-file <file>]... [--json]

<file> is JSON (.json, read as strictly as the API reads a request body) or YAML:
  a policy       the body of POST /v1/policies: name, description, config (with its
                 rules), overrides
  a repo config  a repository's .github/svc.yml: policy, policyConfig, rules, agents, ...
Which one is told by its members (a file named svc.yml with none is a repo config); --kind
says it outright.

A valid file prints the effective config (every member, defaults filled in) and its
config_hash: what receipts evaluated under it without overrides carry as policy.config_hash.
For a .github/svc.yml that is the named policy with its policyConfig applied and its rules
added, which must be what the policy's "overrides" allows; a policy that is not built in is
read from --policy-file (a policy file, as the operator created it with svc policies create).

Options:
  --kind <k>           policy or repo-config, instead of telling by the members
  --policy-file <f>    a custom policy the file may name (repeatable)
  --json               one JSON object instead of text

Exit codes: 0 valid, 1 invalid (each problem as "<path>: <message>"), 2 wrong usage or a
file that cannot be read.
Examples (docs/POLICY_TESTS.md):
  svc policy check policies/production.yml
  svc policy check .github/svc.yml --json`;

export const POLICY_TEST_HELP = `svc policy test — evaluate test cases against a policy, offline

Usage:
  svc policy test <policy> <cases.yml> [--kind policy|repo-config] [--policy-file <file>]...
                  [--json]

<policy> is a policy file, a .github/svc.yml or the name of a built-in policy
(${BUILTIN_POLICIES.map((p) => p.name).join(', ')}). <cases.yml> (YAML or JSON) lists cases:

  cases:
    - name: docs change by an agent is allowed
      claim: { ... }                   # a ClaimInput; claim_id may be left out
      expect:
        verdict: ALLOWED               # ALLOWED, BLOCKED, ESCALATED (NOT_GATED: see below)
        admissibility: ACCEPTED        # optional
        rules: { min_sources: pass, docs-ci: fail }   # optional, rule by rule
                                       # (a conditional rule as docs-ci or rule:docs-ci)
    - name: from a file
      claim_file: claims/deploy.json   # relative to cases.yml
      expect: { verdict: ESCALATED }
    - name: a recorded pull request
      pull_request: prs/1234.yml       # what the GitHub App's claim builder takes
      expect: { verdict: BLOCKED }
    - name: a loosening policyConfig is refused
      claim: { ... }
      expect: { error: policy_override_refused }

Each case is evaluated as POST /v1/evaluate would evaluate it under <policy> (the claim's
policyConfig applied as far as the policy's "overrides" allows, then the same evaluation and
replay), with nothing signed, written or sent. Under a .github/svc.yml a claim gets the
repository's policy and policyConfig, as the App submits it, and a pull request whose author
is no agent is NOT_GATED unless gate_humans is true.

Options:
  --kind <k>           policy or repo-config, instead of telling by the members
  --policy-file <f>    a custom policy a .github/svc.yml may name (repeatable)
  --json               one JSON object: every case with expected, actual and differences

Prints PASS or FAIL per case, under each failure what differs (expected, got, and why), then
"<n> passed, <m> failed". Exit codes: 0 every case passed, 1 some failed, 2 wrong usage or a
file that cannot be read or is invalid (every problem named).
Examples (docs/POLICY_TESTS.md):
  svc policy test strict tests/cases.yml
  svc policy test .github/svc.yml tests/pull-requests.yml --json`;

export const POLICY_HELP = `svc policy — check and test policies offline (no store, no service)

  svc policy check <file>                validate a policy file or a .github/svc.yml
  svc policy test <policy> <cases.yml>   evaluate test cases against a policy

Run "svc policy check --help" or "svc policy test --help" for details.`;

const readText: ReadFile = (path) => {
  try {
    return { ok: true, text: readFileSync(path, 'utf8') };
  } catch (error) {
    return { ok: false, problem: `cannot read it: ${(error as Error).message}` };
  }
};

/** A problem that ends the command with exit code 2: wrong usage, or input it cannot use. */
class Refusal extends Error {
  constructor(readonly lines: string[]) {
    super(lines.join('\n'));
  }
}

function parseOptions(args: string[]) {
  return parseArgs({
    args,
    options: {
      kind: { type: 'string' },
      'policy-file': { type: 'string', multiple: true },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    allowPositionals: true,
    strict: true,
  });
}

function kindOf(value: string | undefined, usage: (message: string) => never): Kind | undefined {
  if (value === undefined) return undefined;
  return KINDS.includes(value as Kind)
    ? (value as Kind)
    : usage(`--kind must be one of ${KINDS.join(', ')}; got "${value}"`);
}

/** Reads and parses a file; an unreadable one is a refusal, an unparsable one a problem. */
function readDocument(path: string): Parsed<unknown> {
  const file = readText(path);
  if (!file.ok) throw new Refusal([`${path}: ${file.problem}`]);
  return parseDocument(file.text, path);
}

/** The --policy-file policies, created as shared policies; any problem is a refusal. */
async function policySetOf(files: string[] | undefined): Promise<PolicySet> {
  const policies = new PolicySet();
  for (const path of files ?? []) {
    const doc = readDocument(path);
    const added = doc.ok ? await policies.add(doc.value) : doc;
    if (!added.ok)
      throw new Refusal([`--policy-file ${path} is not a valid policy:`, ...added.problems]);
  }
  return policies;
}

async function subjectOfFile(
  path: string,
  kind: Kind | undefined,
  policies: PolicySet,
): Promise<{ subject: Parsed<Subject>; kind: Kind | null }> {
  const doc = readDocument(path);
  if (!doc.ok) return { subject: doc, kind: kind ?? null };
  const detected = kind ?? detectKind(doc.value, path);
  if (typeof detected !== 'string') throw new Refusal([`${path}: ${detected.problem}`]);
  return { subject: await subjectOf(doc.value, detected, policies), kind: detected };
}

const kindText = (kind: Kind | null) =>
  kind === 'policy'
    ? 'policy (POST /v1/policies body)'
    : kind === 'repo-config'
      ? '.github/svc.yml'
      : 'file';

async function check(args: string[], out: Out, usage: (message: string) => never): Promise<number> {
  const { values, positionals } = parseOptions(args);
  if (values.help) {
    out(POLICY_CHECK_HELP);
    return 0;
  }
  const [file, ...rest] = positionals;
  if (!file) return usage('policy check needs a file');
  if (rest.length > 0) return usage('too many arguments');
  const policies = await policySetOf(values['policy-file']);
  const { subject, kind } = await subjectOfFile(file, kindOf(values.kind, usage), policies);
  const problems = subject.ok ? problemsOf(subject.value) : subject.problems;
  if (problems.length > 0) {
    if (values.json) out(JSON.stringify({ file, kind, valid: false, problems }, null, 2));
    else {
      out(`${file}: invalid ${kindText(kind)}`);
      for (const problem of problems) out(problem);
    }
    return 1;
  }
  const valid = (subject as { ok: true; value: Subject }).value;
  if (values.json) out(JSON.stringify({ file, valid: true, ...checkJson(valid) }, null, 2));
  else for (const line of [`${file}: valid ${kindText(kind)}`, ...checkLines(valid)]) out(line);
  return 0;
}

/** What makes a parsed file unusable all the same: a policyConfig its policy refuses. */
function problemsOf(subject: Subject): string[] {
  if (subject.kind !== 'repo-config' || !subject.effective || subject.effective.ok) return [];
  // The App would submit every claim with this policyConfig, and each would be refused.
  return [
    `${subject.effective.message} (every claim of the App would be refused ${subject.effective.code})`,
  ];
}

function checkJson(subject: Subject) {
  if (subject.kind !== 'repo-config') {
    const v = subject.view;
    return {
      kind: 'policy',
      name: v.name,
      description: v.description,
      overrides: v.overrides,
      config: v.config,
      effective: v.effective,
      config_hash: v.config_hash,
    };
  }
  const effective = subject.effective?.ok ? subject.effective : null;
  return {
    kind: 'repo-config',
    config: subject.config,
    policy: policyNameOf(subject),
    effective: effective?.config ?? null,
    config_hash: effective?.config_hash ?? null,
    ...(effective ? {} : { note: unresolvable(subject) }),
  };
}

function checkLines(subject: Subject): string[] {
  const indent = (text: string) => text.split('\n').map((l) => `  ${l}`);
  if (subject.kind !== 'repo-config') {
    const v = subject.view;
    return [
      `name: ${v.name}`,
      ...(v.description ? [`description: ${v.description}`] : []),
      `overrides: ${v.overrides}`,
      'effective config:',
      ...indent(JSON.stringify(v.effective, null, 2)),
      `config_hash: ${v.config_hash}`,
    ];
  }
  const { config } = subject;
  const lines = [
    `policy: ${policyNameOf(subject)}`,
    ...(config.policyConfig ? [`policyConfig: ${JSON.stringify(config.policyConfig)}`] : []),
    `agents: ${JSON.stringify(config.agents)}`,
    `gate_humans: ${config.gate_humans}`,
    `drafts: ${config.drafts}`,
    `check_name: ${config.check_name}`,
    ...(config.reviewers.length ? [`reviewers: ${JSON.stringify(config.reviewers)}`] : []),
  ];
  const hash = configHashOf(subject);
  if (subject.effective?.ok && hash) {
    lines.push(
      `effective config (${describeSubject(subject).replace(/^\.github\/svc\.yml \((.*)\)$/, '$1')}):`,
      ...indent(JSON.stringify(subject.effective.config, null, 2)),
      `config_hash: ${hash}`,
    );
  } else lines.push(`note: ${unresolvable(subject)}`);
  return lines;
}

async function test(args: string[], out: Out, usage: (message: string) => never): Promise<number> {
  const { values, positionals } = parseOptions(args);
  if (values.help) {
    out(POLICY_TEST_HELP);
    return 0;
  }
  const [policyArg, casesFile, ...rest] = positionals;
  if (!policyArg || !casesFile) return usage('policy test needs a policy and a cases file');
  if (rest.length > 0) return usage('too many arguments');
  const kind = kindOf(values.kind, usage);
  const policies = await policySetOf(values['policy-file']);

  let subject: Subject;
  const builtin = existsSync(policyArg) ? null : await builtinSubject(policyArg, policies);
  if (builtin) {
    if (kind) return usage('--kind applies to a policy file, not to a built-in policy');
    subject = builtin;
  } else if (!existsSync(policyArg)) {
    return usage(
      `"${policyArg}" is neither a file nor a built-in policy (${BUILTIN_POLICIES.map((p) => p.name).join(', ')})`,
    );
  } else {
    const loaded = await subjectOfFile(policyArg, kind, policies);
    if (!loaded.subject.ok) {
      throw new Refusal([
        `${policyArg}: invalid ${kindText(loaded.kind)}:`,
        ...loaded.subject.problems,
      ]);
    }
    subject = loaded.subject.value;
    const problems = [...problemsOf(subject), ...[unresolvable(subject) ?? []].flat()];
    if (problems.length) throw new Refusal([`${policyArg}: cannot be tested:`, ...problems]);
  }

  const doc = readDocument(casesFile);
  const base = dirname(resolve(casesFile));
  const cases = doc.ok ? loadCases(doc.value, (path) => readText(resolve(base, path))) : doc;
  if (!cases.ok) throw new Refusal([`${casesFile}: invalid cases file:`, ...cases.problems]);

  const results = await runCases(subject, cases.value);
  if (values.json) out(JSON.stringify(resultsJson(subject, results), null, 2));
  else for (const line of renderResults(subject, results)) out(line);
  return results.every((r) => r.passed) ? 0 : 1;
}

/**
 * `svc policy check | test`: work on files only, never on the store, so they run in CI or on a
 * laptop without the service. Exit codes as every svc command: 0, 1 (invalid, or a case
 * failed), 2 (wrong usage, a file that cannot be read, invalid input of a test).
 */
export async function policyFileCommands(
  args: string[],
  io: { out: Out; err: Out },
  usage: (message: string) => never,
): Promise<number> {
  const [command, ...rest] = args;
  try {
    switch (command) {
      case 'check':
        return await check(rest, io.out, usage);
      case 'test':
        return await test(rest, io.out, usage);
      case undefined:
      case '--help':
      case '-h':
        io.out(POLICY_HELP);
        return 0;
      default:
        return usage(`unknown policy command "${command}" (check, test)`);
    }
  } catch (error) {
    if (!(error instanceof Refusal)) throw error;
    const [first, ...more] = error.lines;
    io.err(`svc: ${first}`);
    for (const line of more) io.err(`  ${line}`);
    return 2;
  }
}

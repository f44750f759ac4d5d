import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  describeRules,
  hashCanonical,
  isObject,
  isVerifyError,
  judgeWitnesses,
  parentEvidenceOf,
  parseTlogPolicy,
  parseReceiptInput,
  proceeds,
  RECEIPT_ID_PATTERN,
  submitterLabel,
  type VerifyExpectations,
  verifyOffline,
  type TlogPolicy,
  type VerifyResult,
  type WitnessReport,
  type WitnessVerdict,
} from '@svc/verify';
import { buildClaim, type WorkflowContext } from './claim.js';
import { ActionFailure } from './failure.js';
import { callSvc, describeFailure, type HttpDeps } from './http.js';
import type { ActionInputs } from './inputs.js';
import { renderSummary, type RuleRow } from './summary.js';
import { trustedKeys, type Trust, type TrustedKey } from './trust.js';
import { witnessCheckpoint } from './witness.js';
import { writeAttestation } from './attestation.js';

/** Everything the Action touches outside its inputs: @actions/core in production, fakes in tests. */
export interface ActionDeps {
  info(message: string): void;
  warning(message: string): void;
  setOutput(name: string, value: string): void;
  appendSummary(markdown: string): Promise<void>;
  context: WorkflowContext;
  http: HttpDeps;
}

export interface Outcome {
  verdict: string | null;
  admissibility: string | null;
  receiptId: string | null;
  receiptPath: string | null;
  valid: boolean;
}

type Json = Record<string, unknown>;
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

function parseReceipt(text: string, where: string) {
  try {
    return parseReceiptInput(text);
  } catch (error) {
    if (isVerifyError(error))
      throw new ActionFailure(`${where} is not a usable receipt: ${error.message}`);
    throw error;
  }
}

function readReceiptFile(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new ActionFailure(`cannot read receipt-file ${path}: ${(error as Error).message}`);
  }
}

/** The claim sent: the given one or one from context, with the policy inputs applied. */
function claimToSend(inputs: ActionInputs, context: WorkflowContext): Json {
  const claim = { ...(inputs.claim ?? buildClaim(context)) };
  if (inputs.policy) claim.policy = inputs.policy;
  if (inputs.policyConfig) claim.policyConfig = inputs.policyConfig;
  return claim;
}

/** Failed rules as the receipt signs them, when no evaluate response lists every rule. */
const rulesOf = (response: Json | null, receipt: Json): RuleRow[] => {
  const listed = isObject(response?.policy) ? response.policy.rules : undefined;
  const rules = Array.isArray(listed)
    ? listed
    : isObject(receipt.policy) && Array.isArray(receipt.policy.checks)
      ? receipt.policy.checks
      : [];
  return rules.filter(isObject).map((r) => ({
    rule: str(r.rule) ?? '?',
    passed: r.passed === true,
    reason: str(r.reason) ?? '',
  }));
};

/** Why a verification is not trusted, in words for the step's failure message. */
function trustProblems(result: VerifyResult): string[] {
  return result.checks
    .filter((c) => c.status === 'FAIL')
    .map((c) => {
      if (c.name === 'signature_valid')
        return `the receipt is tampered with or not signed by the trusted key: ${c.detail ?? ''}`;
      if (c.name === 'policy_binding')
        return `the receipt's signed policy is not what this workflow asked for: ${c.detail ?? ''}`;
      return `${c.name}: ${c.detail ?? 'FAIL'}`;
    });
}

/**
 * Why the verdict is not a go-ahead: the failed rules the receipt signs; when none failed (an
 * escalation by the kind of action), the evaluation's reason, else the admissibility reason.
 */
function whyNot(receipt: Json, response: Json | null): string {
  const failed = rulesOf(null, receipt).filter((r) => !r.passed);
  if (failed.length > 0) return `; failing rules: ${describeRules(failed)}`;
  const reason =
    (isObject(response?.policy) ? str(response.policy.reason) : null) ??
    (isObject(receipt.admissibility) ? str(receipt.admissibility.reason) : null);
  return reason ? `; ${reason}` : '';
}

/**
 * The verdict gate of fail-on, the same in every mode: the problem that fails the step, or the
 * warning when fail-on lets a verdict through that is not ALLOWED and ACCEPTED.
 */
function verdictGate(
  inputs: ActionInputs,
  verdict: string | null,
  admissibility: string | null,
  receipt: Json,
  response: Json | null,
): { problem: string | null; warning: string | null } {
  if (proceeds(verdict, admissibility)) return { problem: null, warning: null };
  const outcome = `verdict ${verdict ?? 'missing'}, admissibility ${admissibility ?? 'missing'}`;
  if (inputs.failOn === 'not-allowed')
    return {
      problem: `${outcome}: not ALLOWED and ACCEPTED (fail-on: not-allowed)${whyNot(receipt, response)}`,
      warning: null,
    };
  if (inputs.failOn === 'blocked' && (verdict === 'BLOCKED' || verdict === null))
    return { problem: `${outcome} (fail-on: blocked)${whyNot(receipt, response)}`, warning: null };
  return {
    problem: null,
    warning: `svc ${outcome}: not ALLOWED and ACCEPTED${whyNot(receipt, response)}. The step passes only because fail-on is ${inputs.failOn}.`,
  };
}

interface Obtained {
  receipt: Json;
  /** The evaluate or simulate response, with every rule; null in verify mode. */
  response: Json | null;
  sentClaim: Json | null;
}

/** The receipt to judge: from svc (evaluate, simulate) or from receipt-file (verify). */
async function obtainReceipt(inputs: ActionInputs, deps: ActionDeps): Promise<Obtained> {
  if (inputs.mode === 'verify') {
    const text = readReceiptFile(inputs.receiptFile!);
    const { receipt } = parseReceipt(text, `receipt-file ${inputs.receiptFile}`);
    return { receipt, response: null, sentClaim: null };
  }
  const sentClaim = claimToSend(inputs, deps.context);
  deps.info(`svc ${inputs.mode}: claim ${String(sentClaim.claim_id)}`);
  const res = await callSvc(
    `${inputs.apiUrl}/v1/${inputs.mode}`,
    { method: 'POST', apiKey: inputs.apiKey!, body: sentClaim },
    deps.http,
  );
  if (res.status !== 200)
    throw new ActionFailure(describeFailure(res, `the ${inputs.mode} request`));
  // The answer is as untrusted as any receipt: read it strictly, then verify it.
  const parsed = parseReceipt(res.text, `the ${inputs.mode} response`);
  if (!parsed.fromEvaluateResponse)
    throw new ActionFailure(`the ${inputs.mode} response carries no receipt`);
  // Parsed strictly above, so the plain parse sees the same members.
  return { receipt: parsed.receipt, response: JSON.parse(res.text) as Json, sentClaim };
}

/**
 * One use of the Action, with its inputs read and its effects injected: obtain a receipt (evaluate, simulate) or read one (verify), verify it
 * offline against a trusted key, write it to the workspace, set the outputs and the summary,
 * then fail the step when trust failed (whatever fail-on says) or the verdict fails fail-on.
 */
export async function runWith(inputs: ActionInputs, deps: ActionDeps): Promise<Outcome> {
  const { receipt, response, sentClaim } = await obtainReceipt(inputs, deps);
  const problems: string[] = [];
  let verification: VerifyResult | null = null;
  let key: TrustedKey | null = null;
  let trust: Trust | null = null;
  if (inputs.mode !== 'simulate' || inputs.witnessState) {
    try {
      trust = await trustedKeys(inputs, deps.http, deps.warning);
    } catch (error) {
      // A key that cannot be trusted fails the step below, after the summary is written.
      if (!(error instanceof ActionFailure)) throw error;
      problems.push(error.message);
    }
  }
  if (inputs.mode !== 'simulate') {
    if (trust) {
      const chosen = trust.keyFor(receipt);
      key = chosen.key;
      // What the workflow asked for is what the signed policy must say (contract §8).
      const asked = sentClaim ? str(sentClaim.policy) : null;
      const expect: VerifyExpectations = { ...inputs.expect };
      if (expect.policy === undefined && asked) expect.policy = asked;
      verification = verifyOffline(receipt, key.key, expect, chosen.keyRefusal);
      problems.push(...trustProblems(verification));
      if (sentClaim) problems.push(...claimBinding(receipt, sentClaim));
    }
  } else {
    deps.info('simulate: svc signs and stores nothing, so there is nothing to verify');
  }

  const witnessProblems: string[] = [];
  let witnessed: (WitnessReport & { note: string }) | null = null;
  let quorum: WitnessVerdict | null = null;
  if (inputs.witnessState && trust) {
    try {
      witnessed = await witnessCheckpoint(
        inputs.apiUrl!,
        inputs.witnessState,
        trust.checkpointKeys,
        deps.http,
      );
    } catch (error) {
      if (!(error instanceof ActionFailure)) throw error;
      witnessProblems.push(`log witness failed: ${error.message}`);
    }
    if (witnessed?.ok) {
      deps.info(`log witness: ${witnessed.reason}`);
      if (inputs.witnessPolicy) {
        try {
          // Cosignatures dated up to 10 minutes ahead are a witness's clock, not a forgery.
          quorum = judgeWitnesses(
            witnessed.note,
            readWitnessPolicy(inputs.witnessPolicy),
            Math.floor(Date.now() / 1000) + 600,
          );
        } catch (error) {
          if (!(error instanceof ActionFailure)) throw error;
          witnessProblems.push(error.message);
        }
        for (const w of quorum?.report?.witnesses ?? [])
          deps.info(`log witness ${w.name} (${w.kind}): ${w.cosigned ? 'cosigned' : 'missing'}`);
        if (quorum?.ok) deps.info(`log witness quorum: ${quorum.reason}`);
        else if (quorum) witnessProblems.push(`log witness quorum NOT MET: ${quorum.reason}`);
      }
    } else if (witnessed) {
      witnessProblems.push(
        `log witness REFUSED (${witnessed.outcome}): ${witnessed.reason}; ${inputs.witnessState} was left as it was`,
      );
      // The two signed notes are the evidence that svc showed two histories: keep them in the log.
      if (witnessed.kept) deps.info(`kept checkpoint (${inputs.witnessState}):\n${witnessed.kept}`);
      if (witnessed.checkpoint) deps.info(`refused checkpoint:\n${witnessed.checkpoint}`);
    }
  }

  // A log that showed two histories vouches for none of its receipts.
  const valid =
    verification !== null &&
    verification.valid &&
    problems.length === 0 &&
    witnessProblems.length === 0;
  // An untrusted receipt's verdict is whatever its bearer wrote: it reaches no output, so
  // no later step can read a pass from it. A simulation is unsigned by nature and says so.
  const readable = valid || (inputs.mode === 'simulate' && witnessProblems.length === 0);
  const verdict = readable && isObject(receipt.policy) ? str(receipt.policy.verdict) : null;
  const admissibility =
    readable && isObject(receipt.admissibility) ? str(receipt.admissibility.status) : null;
  const receiptId = str(receipt.receipt_id);
  const receiptPath = writeReceipt(inputs.workspace, receiptId, receipt, inputs.mode);

  for (const c of verification?.checks ?? [])
    deps.info(`${c.status.padEnd(10)} ${c.name}${c.detail ? `  ${c.detail}` : ''}`);
  if (verification?.signed?.submitter)
    deps.info(`signed submitter: ${submitterLabel(verification.signed.submitter)}`);
  if (verification?.signed?.policy)
    deps.info(
      `signed policy: ${verification.signed.policy.name} ${verification.signed.policy.config_hash}`,
    );

  deps.setOutput('verdict', verdict ?? '');
  deps.setOutput('admissibility', admissibility ?? '');
  deps.setOutput('receipt-id', receiptId ?? '');
  deps.setOutput('receipt-path', receiptPath);
  deps.setOutput('valid', String(valid));
  // The receipt as an in-toto attestation, for a later step to publish: only of a receipt
  // that verified, checked under the same trust.
  let attestationPath = '';
  if (inputs.attestation && valid && receiptId && inputs.apiUrl && trust) {
    try {
      attestationPath = await writeAttestation({
        apiUrl: inputs.apiUrl,
        apiKey: inputs.apiKey,
        receiptId,
        receipt,
        keys: trust.checkpointKeys,
        dir: join(inputs.workspace, 'svc-receipts'),
        http: deps.http,
      });
      deps.info(`attestation: ${attestationPath}`);
    } catch (error) {
      if (!(error instanceof ActionFailure)) throw error;
      witnessProblems.push(error.message);
    }
  }
  deps.setOutput('attestation-path', attestationPath);
  const accepted = witnessed?.ok ? witnessed : null;
  deps.setOutput('log-witness', witnessed?.outcome ?? '');
  deps.setOutput('log-size', accepted ? String(accepted.size) : '');
  deps.setOutput('log-root', accepted?.root ?? '');
  deps.setOutput('log-quorum', quorum ? (quorum.ok ? 'met' : 'not_met') : '');

  // An escalation decided by a human: the gate judges the verified disposition's verdict.
  const decided =
    readable && verdict === 'ESCALATED' && trust && verification
      ? await dispositionOf(inputs, deps, receipt, verification, trust, problems)
      : null;
  if (readable && verdict !== 'ESCALATED' && (inputs.dispositionFile || inputs.fetchDisposition))
    deps.info(
      `svc: the receipt is ${verdict ?? 'without a verdict'}, not ESCALATED: no disposition applies`,
    );
  deps.setOutput('disposition', decided?.decision ?? '');
  deps.setOutput('disposition-receipt-id', decided?.receiptId ?? '');
  const gated = decided ?? { verdict, admissibility, receipt, response };
  const { problem: gate, warning } =
    readable && problems.length === 0
      ? verdictGate(inputs, gated.verdict, gated.admissibility, gated.receipt, gated.response)
      : { problem: null, warning: null };
  if (warning) deps.warning(warning);
  await deps.appendSummary(
    renderSummary({
      mode: inputs.mode,
      trusted: readable,
      verdict,
      admissibility,
      receiptId,
      receiptPath,
      // The page of the service's ledger explorer, built as the API's URLs are.
      receiptUrl:
        inputs.apiUrl && receiptId && inputs.mode !== 'simulate'
          ? `${inputs.apiUrl}/explorer/receipts/${encodeURIComponent(receiptId)}`
          : null,
      rules: readable ? rulesOf(response, receipt) : [],
      verification,
      key,
      problems: [...problems, ...witnessProblems, ...(gate ? [gate] : [])],
      warning,
      witness: witnessed,
      witnessState: inputs.witnessState,
      disposition: decided?.note ?? null,
    }),
  );
  // Trust first: a receipt that does not verify fails the step even with fail-on: never.
  const failures = [
    ...(problems.length > 0 ? [`svc receipt not trusted: ${problems.join('; ')}`] : []),
    ...witnessProblems.map((p) => `svc ${p}`),
  ];
  if (failures.length > 0) throw new ActionFailure(failures.join('. '));
  if (gate) throw new ActionFailure(`svc gate: ${gate}`);
  return { verdict, admissibility, receiptId, receiptPath, valid };
}

interface Decided {
  /** One sentence for the log and the summary. */
  note: string;
  decision: string;
  receiptId: string | null;
  verdict: string | null;
  admissibility: string | null;
  receipt: Json;
  response: Json | null;
}

/**
 * The disposition of an ESCALATED receipt (contract §11), from disposition-file or api-url,
 * verified like the receipt: under the trusted keys, with the same expectations, and linked to
 * this very receipt (parent_link PASS). Null when none is given or svc has none yet; a
 * disposition that does not verify, or is another receipt's, adds a trust problem.
 */
async function dispositionOf(
  inputs: ActionInputs,
  deps: ActionDeps,
  parent: Json,
  parentResult: VerifyResult,
  trust: Trust,
  problems: string[],
): Promise<Decided | null> {
  let text: string;
  let where: string;
  if (inputs.dispositionFile) {
    where = `disposition-file ${inputs.dispositionFile}`;
    try {
      text = readFileSync(inputs.dispositionFile, 'utf8');
    } catch (error) {
      throw new ActionFailure(`cannot read ${where}: ${(error as Error).message}`);
    }
  } else if (inputs.fetchDisposition) {
    const id = str(parent.receipt_id) ?? '';
    const url = `${inputs.apiUrl}/v1/receipts/${encodeURIComponent(id)}/disposition`;
    where = `the disposition served at ${url}`;
    const res = await callSvc(
      url,
      { method: 'GET', apiKey: inputs.apiKey ?? undefined },
      deps.http,
    );
    if (res.status === 404) {
      deps.info(`svc: receipt ${id} is ESCALATED and has no disposition yet`);
      return null;
    }
    if (res.status !== 200)
      throw new ActionFailure(describeFailure(res, 'the disposition request'));
    text = res.text;
  } else return null;
  const { receipt } = parseReceipt(text, where);
  const chosen = trust.keyFor(receipt);
  // Who recorded the decision and whom it names, when the workflow pins them: any reviewer
  // key of the service can record one, so a valid disposition alone is not enough.
  const result = verifyOffline(
    receipt,
    chosen.key.key,
    { ...inputs.expect, ...inputs.dispositionExpect },
    chosen.keyRefusal,
    undefined,
    parentEvidenceOf(parent, parentResult),
  );
  for (const c of result.checks)
    deps.info(`disposition ${c.status.padEnd(10)} ${c.name}${c.detail ? `  ${c.detail}` : ''}`);
  const link = result.checks.find((c) => c.name === 'parent_link');
  const disposition = isObject(receipt.disposition) ? receipt.disposition : null;
  if (!result.valid || link?.status !== 'PASS' || !disposition) {
    const failed = trustProblems(result);
    problems.push(
      `the disposition (${where}) is not trusted: ${failed.length > 0 ? failed.join('; ') : 'it is not a disposition of this receipt'}`,
    );
    return null;
  }
  const decision = str(disposition.decision) ?? '';
  const reviewer = isObject(disposition.reviewer) ? disposition.reviewer : {};
  const recorder = result.signed?.submitter ? submitterLabel(result.signed.submitter) : '?';
  const note = `the escalation was decided: ${decision} by ${str(reviewer.kind) ?? '?'} ${JSON.stringify(str(reviewer.id))} (${str(disposition.reason) ?? ''}), recorded by ${recorder}, disposition receipt ${str(receipt.receipt_id) ?? '?'}, verified and linked to this receipt`;
  deps.info(`svc: ${note}`);
  return {
    note,
    decision,
    receiptId: str(receipt.receipt_id),
    verdict: isObject(receipt.policy) ? str(receipt.policy.verdict) : null,
    admissibility: isObject(receipt.admissibility) ? str(receipt.admissibility.status) : null,
    receipt,
    response: null,
  };
}

/** The receipt must be for the claim this step sent: same claim_id, inputs_hash = H(claim). */
function claimBinding(receipt: Json, claim: Json): string[] {
  const problems: string[] = [];
  if (receipt.claim_id !== claim.claim_id)
    problems.push(
      `the receipt is for claim ${JSON.stringify(receipt.claim_id)}, not ${JSON.stringify(claim.claim_id)}`,
    );
  const evidence = isObject(receipt.evidence) ? receipt.evidence : {};
  if (evidence.inputs_hash !== hashCanonical(claim))
    problems.push(
      'the receipt commits to other inputs than the claim this step sent (evidence.inputs_hash)',
    );
  return problems;
}

function writeReceipt(
  workspace: string,
  receiptId: string | null,
  receipt: Json,
  mode: string,
): string {
  // receipt_id is attacker-controlled: only the contract's form may become a file name.
  const name =
    receiptId && RECEIPT_ID_PATTERN.test(receiptId) ? receiptId : `receipt-${Date.now()}`;
  const dir = join(workspace, 'svc-receipts');
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${mode === 'simulate' ? 'simulated-' : ''}${name}.json`);
  writeFileSync(path, `${JSON.stringify(receipt, null, 2)}\n`);
  return path;
}

/** The C2SP tlog-policy of `witness-policy`; a file that cannot be read or parsed fails the step. */
function readWitnessPolicy(path: string): TlogPolicy {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ActionFailure(`cannot read witness-policy ${path}: ${(error as Error).message}`);
  }
  try {
    return parseTlogPolicy(text);
  } catch (error) {
    if (isVerifyError(error)) throw new ActionFailure(`witness-policy ${path}: ${error.message}`);
    throw error;
  }
}

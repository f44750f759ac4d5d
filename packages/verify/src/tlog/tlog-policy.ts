import { VerifyError } from '../errors.js';
import {
  parseCheckpointText,
  parseNote,
  parseVerifierKey,
  verifierKey,
  verifyNote,
  type NoteKey,
} from './note.js';
import {
  checkWitnessSignature,
  parseWitnessVerifierKey,
  witnessVerifierKey,
  type CosignatureKind,
  type WitnessKey,
} from './witness-key.js';

// C2SP tlog-policy: which logs and which quorum of witnesses a verifier trusts. The file is
// parsed strictly (§Policy file syntax and structure): a line that is not a comment, empty, or
// one of `log`, `witness`, `group`, `quorum` is refused, as is anything the specification rules
// out (a duplicate key or name, a name used before its definition, a member listed twice, a
// threshold out of range, a quorum missing or given twice, a control character). A policy
// file is trusted configuration, but it is still read as untrusted text: every problem is a
// VerifyError naming the line.

/** §Implementation limits recommends at least 32 of each; a few times that is plenty. */
export const MAX_POLICY_ENTRIES = 128;
export const MAX_POLICY_SIZE = 1024 * 1024;

export interface PolicyLog {
  /** The log's checkpoint key (signed-note type 0x01); its name is the log's origin. */
  key: NoteKey;
  url: string | null;
}

export interface PolicyWitness {
  /** The policy's own name for the witness (not necessarily its key name). */
  name: string;
  key: WitnessKey;
  url: string | null;
}

export interface PolicyGroup {
  name: string;
  /** How many members must have witnessed (1 to members.length). */
  threshold: number;
  members: string[];
}

export interface TlogPolicy {
  logs: PolicyLog[];
  witnesses: PolicyWitness[];
  groups: PolicyGroup[];
  /** A witness or group name, or `none`. */
  quorum: string;
}

const refuse = (line: number, message: string): never => {
  throw new VerifyError('validation_failed', `tlog-policy line ${line}: ${message}`);
};

const sameBytes = (a: Uint8Array, b: Uint8Array) =>
  a.length === b.length && a.every((byte, i) => byte === b[i]);

/** An optional URL field: an absolute http(s) URL. */
function urlField(value: string | undefined, line: number): string | null {
  if (value === undefined) return null;
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    return refuse(line, `not a URL: ${JSON.stringify(value.slice(0, 200))}`);
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')
    return refuse(line, `a URL is http(s), not ${parsed.protocol}`);
  return value;
}

/** Parses a tlog-policy file; a VerifyError names the first line that breaks a rule. */
export function parseTlogPolicy(text: string): TlogPolicy {
  if (text.length > MAX_POLICY_SIZE)
    throw new VerifyError('validation_failed', `tlog-policy: larger than ${MAX_POLICY_SIZE} bytes`);
  const policy: TlogPolicy = { logs: [], witnesses: [], groups: [], quorum: '' };
  // Witnesses and groups share one namespace, in which `none` is predefined (§What is a policy).
  const names = new Set<string>(['none']);
  let quorumLine = 0;
  const lines = text.split('\n');
  for (const [i, raw] of lines.entries()) {
    const n = i + 1;
    // §Character set: tab and newline are the only control characters allowed.
    // eslint-disable-next-line no-control-regex
    if (/[\u0000-\u0008\u000b-\u001f\u007f]/u.test(raw))
      refuse(n, 'a control character (only tab and newline are allowed)');
    const fields = raw.split(/[ \t]+/u).filter((f) => f.length > 0);
    if (fields.length === 0 || fields[0]!.startsWith('#')) continue;
    if (policy.logs.length + policy.witnesses.length + policy.groups.length >= MAX_POLICY_ENTRIES)
      refuse(n, `more than ${MAX_POLICY_ENTRIES} logs, witnesses and groups`);
    const [keyword, ...args] = fields as [string, ...string[]];
    switch (keyword) {
      case 'log': {
        if (args.length < 1 || args.length > 2) refuse(n, 'a log line is: log <vkey> [<url>]');
        const key = parseVerifierKey(args[0]!);
        if (!key) refuse(n, 'not an Ed25519 signed-note vkey (type 0x01) with a matching key ID');
        if (policy.logs.some((l) => sameBytes(l.key.publicKey, key!.publicKey)))
          refuse(n, 'a duplicate log key');
        policy.logs.push({ key: key!, url: urlField(args[1], n) });
        break;
      }
      case 'witness': {
        if (args.length < 2 || args.length > 3)
          refuse(n, 'a witness line is: witness <name> <vkey> [<url>]');
        const [name, vkey] = args as [string, string];
        if (names.has(name)) refuse(n, `the name ${JSON.stringify(name)} is already defined`);
        const key = parseWitnessVerifierKey(vkey);
        if (!key)
          refuse(
            n,
            'not a cosigner vkey (type 0x04 Ed25519 or 0x06 ML-DSA-44) with a matching key ID',
          );
        if (policy.witnesses.some((w) => sameBytes(w.key.publicKey, key!.publicKey)))
          refuse(n, 'a duplicate witness key');
        names.add(name);
        policy.witnesses.push({ name, key: key!, url: urlField(args[2], n) });
        break;
      }
      case 'group': {
        if (args.length < 3) refuse(n, 'a group line is: group <name> all|any|<k> <name>...');
        const [name, k, ...members] = args as [string, string, ...string[]];
        if (names.has(name)) refuse(n, `the name ${JSON.stringify(name)} is already defined`);
        const seen = new Set<string>();
        for (const member of members) {
          if (member === 'none') refuse(n, '"none" cannot be a group member');
          if (!names.has(member))
            refuse(n, `${JSON.stringify(member)} is not defined on a line before`);
          if (seen.has(member)) refuse(n, `${JSON.stringify(member)} is listed twice`);
          seen.add(member);
        }
        let threshold: number;
        if (k === 'all') threshold = members.length;
        else if (k === 'any') threshold = 1;
        else if (/^[1-9][0-9]{0,3}$/.test(k)) threshold = Number(k);
        else return refuse(n, `the threshold ${JSON.stringify(k)} is not all, any or a number`);
        if (threshold > members.length)
          refuse(n, `the threshold ${threshold} is more than the ${members.length} member(s)`);
        names.add(name);
        policy.groups.push({ name, threshold, members });
        break;
      }
      case 'quorum': {
        if (args.length !== 1) refuse(n, 'a quorum line is: quorum <name>');
        if (quorumLine) refuse(n, `a second quorum line (the first is line ${quorumLine})`);
        if (!names.has(args[0]!))
          refuse(n, `${JSON.stringify(args[0])} is not defined on a line before`);
        policy.quorum = args[0]!;
        quorumLine = n;
        break;
      }
      default:
        refuse(
          n,
          `unknown line ${JSON.stringify(keyword.slice(0, 64))}: a policy has log, witness, group and quorum lines`,
        );
    }
  }
  if (!quorumLine)
    throw new VerifyError(
      'validation_failed',
      'tlog-policy: no quorum line (quorum none requires no witness)',
    );
  return policy;
}

/** A policy as text, in the order the specification requires (definitions before use). */
export function formatTlogPolicy(policy: TlogPolicy, comments: readonly string[] = []): string {
  const out = comments.map((c) => `# ${c}`.trimEnd());
  if (out.length > 0) out.push('');
  for (const log of policy.logs)
    out.push(`log ${verifierKey(log.key)}${log.url ? ` ${log.url}` : ''}`);
  for (const w of policy.witnesses)
    out.push(`witness ${w.name} ${witnessVerifierKey(w.key)}${w.url ? ` ${w.url}` : ''}`);
  for (const g of policy.groups) {
    const k =
      g.threshold === g.members.length ? 'all' : g.threshold === 1 ? 'any' : String(g.threshold);
    out.push(`group ${g.name} ${k} ${g.members.join(' ')}`);
  }
  out.push(`quorum ${policy.quorum}`);
  return `${out.join('\n')}\n`;
}

/** What one policy witness did for a checkpoint. */
export interface WitnessStatus {
  name: string;
  key_name: string;
  kind: CosignatureKind;
  cosigned: boolean;
  /** The cosignature's timestamp (seconds), when it cosigned. */
  timestamp?: number;
}

export interface QuorumReport {
  /** Whether the policy's quorum of witnesses cosigned the checkpoint. */
  met: boolean;
  quorum: string;
  witnesses: WitnessStatus[];
  /** Key names of signature lines that are neither the log's nor a policy witness's. */
  unknown: string[];
  reason: string;
}

/** Whether `name` (a witness or a group) has witnessed, given the witnesses that cosigned. */
function witnessed(policy: TlogPolicy, name: string, cosigned: ReadonlySet<string>): boolean {
  if (name === 'none') return true;
  const group = policy.groups.find((g) => g.name === name);
  if (!group) return cosigned.has(name);
  const count = group.members.filter((m) => witnessed(policy, m, cosigned)).length;
  return count >= group.threshold;
}

/**
 * Checks the witness cosignatures of a signed checkpoint against a policy's quorum. A
 * cosignature line of a policy witness that does not verify is a refusal (`ok: false`), as a
 * failing signature of a known key rejects a whole signed note; lines of keys the policy does
 * not know are ignored for the quorum and named in `unknown`. `logKeyNames` are the names of
 * the log's own signatures, not reported as unknown.
 */
export function checkQuorum(
  note: string,
  policy: TlogPolicy,
  options: { notAfter?: number; logKeyNames?: readonly string[] } = {},
): { ok: true; report: QuorumReport } | { ok: false; reason: string } {
  const parsed = parseNote(note);
  const checkpoint = parsed ? parseCheckpointText(parsed.text) : null;
  if (!parsed || !checkpoint) return { ok: false, reason: 'not a well-formed signed checkpoint' };
  const statuses: WitnessStatus[] = [];
  const cosigned = new Set<string>();
  for (const w of policy.witnesses) {
    const check = checkWitnessSignature(w.key, parsed.text, checkpoint, parsed.signatures, options);
    if (check.status === 'invalid') return { ok: false, reason: check.reason };
    const status: WitnessStatus = {
      name: w.name,
      key_name: w.key.name,
      kind: w.key.kind,
      cosigned: check.status === 'valid',
    };
    if (check.status === 'valid') {
      status.timestamp = check.timestamp;
      cosigned.add(w.name);
    }
    statuses.push(status);
  }
  const known = new Set([
    ...policy.witnesses.map((w) => w.key.name),
    ...policy.logs.map((l) => l.key.name),
    ...(options.logKeyNames ?? [checkpoint.origin]),
  ]);
  const unknown = [...new Set(parsed.signatures.map((s) => s.name).filter((n) => !known.has(n)))];
  const met = witnessed(policy, policy.quorum, cosigned);
  const names = statuses.filter((s) => s.cosigned).map((s) => s.name);
  const by =
    names.length > 0 ? `cosigned by ${names.join(', ')}` : 'cosigned by no witness of the policy';
  const others = unknown.length > 0 ? `; ignored: ${unknown.join(', ')} (not in the policy)` : '';
  const reason =
    policy.quorum === 'none'
      ? `quorum none: no cosignature required (${by}${others})`
      : `quorum ${policy.quorum} ${met ? 'met' : 'NOT met'}: ${by}${others}`;
  return { ok: true, report: { met, quorum: policy.quorum, witnesses: statuses, unknown, reason } };
}

/** The log keys of a policy whose name is this origin (a checkpoint's key name is its origin). */
export const policyLogKeys = (policy: TlogPolicy, origin: string): NoteKey[] =>
  policy.logs.filter((l) => l.key.name === origin).map((l) => l.key);

/** The verdict on a checkpoint's witnesses under a policy, as printed and as JSON. */
export interface WitnessVerdict {
  /** The quorum is met, every policy witness's cosignature verifies and a policy log signed. */
  ok: boolean;
  reason: string;
  report: QuorumReport | null;
}

/**
 * Judges a signed checkpoint (as served, cosignature lines included) against a policy: when
 * the policy lists logs of this origin, one of them must have signed it (tlog-policy: a
 * checkpoint is valid when signed by a listed log and cosigned by the quorum); then the
 * cosignatures of the policy's witnesses are verified (none dated after `notAfter`, seconds)
 * and the quorum evaluated.
 */
export function judgeWitnesses(
  note: string,
  policy: TlogPolicy,
  notAfter?: number,
): WitnessVerdict {
  const parsed = parseNote(note);
  const origin = parsed?.text.slice(0, parsed.text.indexOf('\n')) ?? '';
  const listed = policy.logs.length > 0;
  const logKeys = policyLogKeys(policy, origin);
  if (listed) {
    const signed = verifyNote(note, logKeys);
    if (!signed.ok)
      return {
        ok: false,
        report: null,
        reason: `the checkpoint of ${JSON.stringify(origin.slice(0, 256))} is not signed by a log of the policy: ${signed.reason}`,
      };
  }
  const checked = checkQuorum(note, policy, {
    notAfter,
    logKeyNames: [origin],
  });
  if (!checked.ok) return { ok: false, report: null, reason: checked.reason };
  return { ok: checked.report.met, reason: checked.report.reason, report: checked.report };
}

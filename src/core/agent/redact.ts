// Secrets a tool call's summary would carry, replaced by `[redacted]` before anything is
// stored or signed (contract §12). The digest is computed over the raw input, never this.
//
// Every pattern runs in time linear in the text (bounded repetitions where a match could
// start at many places), since the text is attacker-controlled.
//
// A redacted value is a run of characters that carry no shell syntax (no quote, `$`, `` ` ``,
// parenthesis, `;`, `&`, `|`, `<`, `>` or white space), so that a redaction cannot hide a
// command from the rules that read the command line: `Bearer $(rm -rf /)` keeps its `$(…)`.
// Where a redaction changes how the line parses all the same (a private key written across
// lines outside quotes), the builder marks the summary incomplete and every rule on commands
// fails closed (tool-summary.ts).

import { programName } from './command-line.js';

export const REDACTED = '[redacted]';

/** Authorization schemes: kept, the credentials after them redacted. */
const SCHEME = '(?:bearer|basic|token|digest|negotiate|aws4-hmac-sha256)';

/** Names of assignments whose value is a secret (`DB_PASS=`, but not `bypass=`). */
const SECRET_NAME = String.raw`(?:password|passwd|passphrase|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|client[_-]?secret|credentials?|(?:[_.-]|\b)pass)`;

/** Characters a redacted value may hold. */
const V = String.raw`[A-Za-z0-9._~+/=%:@,\-]`;

interface Redaction {
  kind: string;
  pattern: RegExp;
  /** The replacement; `$<keep>` keeps the named group (a key's name, a header's scheme). */
  replace: string;
}

/** The kinds of secret recognised, in the order they are applied; docs/POLICIES.md lists them. */
export const REDACTIONS: readonly Redaction[] = [
  {
    kind: 'PEM private key',
    // Base64 lines and RFC 1421 header lines only, so that no command hides inside the block.
    pattern:
      /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?:[A-Za-z0-9+/=\s]|(?:Proc-Type|DEK-Info): [A-Za-z0-9,-]+)*(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|(?=["'\s]|$))/g,
    replace: REDACTED,
  },
  {
    kind: 'AWS access key id',
    pattern: /\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA)[A-Z0-9]{16}\b/g,
    replace: REDACTED,
  },
  {
    kind: 'AWS secret access key',
    pattern: new RegExp(
      String.raw`(?<keep>\b(?:aws_?)?secret_?access_?key["']?\s*[=:]\s*["']?)[A-Za-z0-9/+=]{40}(?![A-Za-z0-9/+=])`,
      'gi',
    ),
    replace: `$<keep>${REDACTED}`,
  },
  {
    kind: 'GitHub token',
    pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b/g,
    replace: REDACTED,
  },
  { kind: 'GitLab token', pattern: /\bglpat-[A-Za-z0-9_-]{20,255}/g, replace: REDACTED },
  { kind: 'Slack token', pattern: /\bxox[abposre]-[A-Za-z0-9-]{10,255}/g, replace: REDACTED },
  { kind: 'npm token', pattern: /\bnpm_[A-Za-z0-9]{36}\b/g, replace: REDACTED },
  {
    kind: 'OpenAI or Anthropic key',
    pattern: /\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,255}/g,
    replace: REDACTED,
  },
  { kind: 'Google API key', pattern: /\bAIza[0-9A-Za-z_-]{35}\b/g, replace: REDACTED },
  {
    kind: 'Stripe secret key',
    pattern: /\b[sr]k_(?:live|test)_[A-Za-z0-9]{10,255}/g,
    replace: REDACTED,
  },
  {
    kind: 'Slack webhook URL',
    pattern:
      /(?<keep>\bhooks\.slack\.com\/(?:services|workflows|triggers)\/)[A-Za-z0-9/_-]{8,512}/g,
    replace: `$<keep>${REDACTED}`,
  },
  {
    kind: 'JSON Web Token',
    pattern: /\beyJ[A-Za-z0-9_-]{4,4096}\.[A-Za-z0-9_-]{2,4096}\.[A-Za-z0-9_-]{0,4096}/g,
    replace: REDACTED,
  },
  {
    kind: 'Authorization header',
    pattern: new RegExp(
      String.raw`(?<keep>\b(?:proxy-)?authorization["']?\s*[:=]\s*["']?(?:${SCHEME}\s+)?)(?!${SCHEME}\s|\[redacted\])${V}+`,
      'gi',
    ),
    replace: `$<keep>${REDACTED}`,
  },
  {
    kind: 'bearer or basic credentials',
    pattern: new RegExp(String.raw`(?<keep>\b(?:bearer|basic)\s+)(?!\[redacted\])${V}{8,}`, 'gi'),
    replace: `$<keep>${REDACTED}`,
  },
  {
    kind: 'API key header',
    pattern: new RegExp(
      String.raw`(?<keep>\b(?:x-api-key|api-key|x-auth-token|private-token|x-access-token)["']?\s*:\s*["']?)${V}+`,
      'gi',
    ),
    replace: `$<keep>${REDACTED}`,
  },
  {
    kind: 'Cookie header',
    // Each `name=value` pair; a `;` that does not start one ends the value.
    pattern: new RegExp(
      String.raw`(?<keep>\b(?:set-)?cookie["']?\s*:\s*["']?)(?!\[redacted\])${V}+(?:;\s?[A-Za-z0-9_.-]{1,64}=${V}+){0,32}`,
      'gi',
    ),
    replace: `$<keep>${REDACTED}`,
  },
  {
    kind: "curl's user password and cookies",
    pattern: new RegExp(
      String.raw`(?<keep>\bcurl\b[^\n;&|]{0,512}?\s(?:(?:-u|--user|--proxy-user|-U)\s*["']?[^\s:'"$${'`'}()]{1,256}:|(?:-b|--cookie)\s+["']?))(?!\[redacted\])${V}+`,
      'g',
    ),
    replace: `$<keep>${REDACTED}`,
  },
  {
    kind: 'MySQL password option',
    pattern: new RegExp(
      String.raw`(?<keep>\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mariadb|mariadb-dump)\b[^\n;&|]{0,512}?\s-p)(?!\[redacted\])${V}+`,
      'g',
    ),
    replace: `$<keep>${REDACTED}`,
  },
  {
    kind: 'sshpass password',
    pattern: new RegExp(
      String.raw`(?<keep>\bsshpass\b[^\n;&|]{0,128}?\s-p\s*["']?)(?!\[redacted\])${V}+`,
      'g',
    ),
    replace: `$<keep>${REDACTED}`,
  },
  {
    kind: 'password in a URL',
    pattern: /(?<keep>\b[a-z][a-z0-9+.-]{0,31}:\/\/[^\s/@:'"]{1,256}:)[^\s/@'"]{1,256}(?=@)/gi,
    replace: `$<keep>${REDACTED}`,
  },
  {
    kind: 'quoted secret assignment',
    // The whole quoted value, quotes included: single quotes hold no shell syntax, and double
    // quotes are taken only when they hold no `$`, backquote or backslash.
    pattern: new RegExp(
      String.raw`(?<keep>\b[A-Za-z0-9_.-]{0,64}${SECRET_NAME}["']?\s*[=:]\s*)(?:'[^'\n]{1,256}'|"[^"$${'`'}\\\n]{1,256}")`,
      'gi',
    ),
    replace: `$<keep>${REDACTED}`,
  },
  {
    kind: 'secret assignment',
    pattern: new RegExp(
      String.raw`(?<keep>\b[A-Za-z0-9_.-]{0,64}${SECRET_NAME}["']?\s*[=:]\s*["']?)(?!\[redacted\])${V}+`,
      'gi',
    ),
    replace: `$<keep>${REDACTED}`,
  },
  {
    kind: 'secret option',
    pattern: new RegExp(
      String.raw`(?<keep>(?:^|\s)--?(?:password|passwd|passphrase|secret|token|api-key|api_key|apikey|access-token|auth-token|client-secret)\s+["']?)(?!\[redacted\])${V}+`,
      'gi',
    ),
    replace: `$<keep>${REDACTED}`,
  },
];

/** A text with every recognised secret replaced by `[redacted]`. */
export function redactSecrets(text: string): string {
  let out = text;
  for (const { pattern, replace } of REDACTIONS) out = out.replace(pattern, replace);
  return out;
}

const SECRET_OPTION =
  /^--?(?:password|passwd|passphrase|secret|token|api-key|api_key|apikey|access-token|auth-token|client-secret)$/i;

const MYSQL = /^(?:mysql|mysqldump|mysqladmin|mysqlimport|mariadb|mariadb-dump)$/;

/**
 * A word that is a secret's assignment whole (`PGPASSWORD=two words`): as one argv word, its
 * value runs to the word's end, spaces included, where a line's would end at the first space.
 */
const SECRET_WORD = new RegExp(
  String.raw`^(?<keep>[A-Za-z0-9_.-]{0,64}${SECRET_NAME}["']?\s*[=:]\s*)(?!\s*\[redacted\]$).`,
  'is',
);

/**
 * One argv word, redacted with what the words before it say: the word after an option that
 * names a secret (`--token abc`) whole, curl's password after `-u user:`, sshpass's `-p` value
 * and MySQL's `-pvalue`. Word boundaries never move.
 */
function redactWord(words: readonly string[], i: number): string {
  const word = words[i]!;
  const previous = i > 0 ? words[i - 1]! : '';
  if (word === '') return word;
  if (i > 0 && SECRET_OPTION.test(previous)) return REDACTED;
  const program = programName({ kind: 'literal', text: words[0]! });
  if (program === 'curl') {
    if (/^(?:-u|--user|--proxy-user|-U)$/.test(previous)) {
      // The user name may be the secret itself (`-u sk_live_…:`, as Stripe's API is called).
      const colon = word.indexOf(':');
      if (colon > 0) {
        const password = word.slice(colon + 1) === '' ? '' : REDACTED;
        return `${redactSecrets(word.slice(0, colon))}:${password}`;
      }
    }
    if (/^(?:-b|--cookie)$/.test(previous)) return REDACTED;
  }
  if (program === 'sshpass' && previous === '-p') return REDACTED;
  if (MYSQL.test(program) && /^-p./.test(word)) return `-p${REDACTED}`;
  const assignment = SECRET_WORD.exec(word);
  if (assignment) return `${assignment.groups!.keep!}${REDACTED}`;
  return redactSecrets(word);
}

/**
 * The words of an argv array, each redacted by `redactWord`. A word's whole value may hold
 * what a shell would run (`bash -c 'PASS=x rm -rf /'`): callers compare how the words parse
 * before and after, as for a line.
 */
export function redactWords(words: readonly string[]): string[] {
  return words.map((_, i) => redactWord(words, i));
}

// A shell command line read as the simple commands it runs, for rules on tool calls
// (docs/POLICIES.md, "Tool calls"). Attacker-controlled: an agent, or a prompt injected into
// one, may write a command line meant to slip past a rule. So quoting is removed as a POSIX
// shell (bash) removes it, every command of a list, pipeline, subshell, `$(…)`, backticks,
// `<(…)`, `${…}` and `$((…))` is a command of its own, wrappers (`sudo`, `env`, `bash -c`,
// `xargs`, `find -exec`, …) are looked through, and whatever cannot be read for certain is
// marked: a word the shell expands (`$x`) is `dynamic` and matches any pattern word, and a
// line that cannot be read at all (an unclosed quote, nesting past MAX_DEPTH) is `opaque`,
// which every `command` condition matches. Pure and bounded: no I/O, at most MAX_COMMANDS.

/** `literal`: known text; `glob`: holds unquoted `*`, `?` or `[`; `dynamic`: the shell expands it. */
export type WordKind = 'literal' | 'glob' | 'dynamic';

export interface Word {
  text: string;
  kind: WordKind;
}

export interface CommandLine {
  /**
   * Every simple command, each as its words (assignments and redirections left out), and each
   * redirection of a file as a command of its operator and target (`>` `out.txt`).
   */
  commands: Word[][];
  /** True when part of the line could not be read: every `command` condition then matches. */
  opaque: boolean;
  /**
   * Where the line changes directory (`cd`, `pushd`; `~` for a bare `cd`): relative paths of
   * later commands are then relative to one of these, not to the project directory.
   */
  cd: Word[];
}

/** How deep `bash -c`, `eval` and substitutions may nest before the line is opaque. */
export const MAX_DEPTH = 8;
/** How many simple commands (wrapped ones counted) one line may give before it is opaque. */
export const MAX_COMMANDS = 512;

type Token =
  | {
      type: 'word';
      word: Word;
      assignment: boolean;
      /** The redirection operator this word is the target of (`>`, `<`, `>>`, …), if any. */
      redirect: string | null;
    }
  | { type: 'op'; op: string };

const OPERATORS = [
  ';;&',
  '&>>',
  '<<<',
  '<<-',
  '&&',
  '||',
  ';;',
  ';&',
  '|&',
  '&>',
  '<<',
  '<>',
  '<&',
  '>&',
  '>>',
  '>|',
  ';',
  '&',
  '|',
  '(',
  ')',
  '<',
  '>',
  '\n',
];
const REDIRECTS = new Set(['<', '>', '>>', '>|', '<>', '<&', '>&', '&>', '&>>', '<<<']);
const HEREDOCS = new Set(['<<', '<<-']);
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=/;
const rank: Record<WordKind, number> = { literal: 0, glob: 1, dynamic: 2 };

/** Reads one line into tokens; substitutions' texts go to `subs`, to be read as lines too. */
class Lexer {
  private i = 0;
  readonly tokens: Token[] = [];
  readonly subs: string[] = [];
  opaque = false;
  private heredocs: { delimiter: string; strip: boolean; expand: boolean }[] = [];
  private text = '';
  private kind: WordKind = 'literal';
  private firstQuoted = -1;
  private brace = 0;

  constructor(private readonly s: string) {}

  run(): this {
    const s = this.s;
    let redirect: string | null = null;
    while (this.i < s.length) {
      const c = s[this.i]!;
      if (c === ' ' || c === '\t' || c === '\r') {
        this.i++;
        continue;
      }
      if (c === '\\' && s[this.i + 1] === '\n') {
        this.i += 2;
        continue;
      }
      if (c === '#') {
        while (this.i < s.length && s[this.i] !== '\n') this.i++;
        continue;
      }
      const processSub = (c === '<' || c === '>') && s[this.i + 1] === '(';
      const op = processSub ? undefined : OPERATORS.find((o) => s.startsWith(o, this.i));
      if (op) {
        this.i += op.length;
        if (HEREDOCS.has(op)) {
          this.heredoc(op === '<<-');
          continue;
        }
        if (REDIRECTS.has(op)) {
          redirect = op;
          continue;
        }
        this.tokens.push({ type: 'op', op });
        if (op === '\n') this.readHeredocBodies();
        continue;
      }
      const token = this.word();
      // `2>file`: digits right before a redirection name a file descriptor, not a word.
      if (
        token.word.kind === 'literal' &&
        this.firstQuoted < 0 &&
        /^\d+$/.test(token.word.text) &&
        (s[this.i] === '<' || s[this.i] === '>')
      ) {
        continue;
      }
      this.tokens.push({ ...token, redirect });
      redirect = null;
    }
    if (this.heredocs.length > 0) this.readHeredocBodies();
    return this;
  }

  private mark(kind: WordKind) {
    if (rank[kind] > rank[this.kind]) this.kind = kind;
  }

  private quoted() {
    if (this.firstQuoted < 0) this.firstQuoted = this.text.length;
  }

  private word(): { type: 'word'; word: Word; assignment: boolean } {
    const s = this.s;
    this.text = '';
    this.kind = 'literal';
    this.firstQuoted = -1;
    this.brace = 0;
    while (this.i < s.length) {
      const c = s[this.i]!;
      if (c === ' ' || c === '\t' || c === '\n' || c === '\r') break;
      if (c === ';' || c === '&' || c === '|' || c === '(' || c === ')') {
        // Extended globs (`@(a|b)`) stay inside the word.
        if (c === '(' && this.text && '?*+@!'.includes(this.text.at(-1)!)) {
          this.text += this.balanced('(', ')');
          this.mark('glob');
          continue;
        }
        break;
      }
      if (c === '<' || c === '>') {
        if (s[this.i + 1] !== '(') break;
        this.i++;
        this.subs.push(this.balanced('(', ')').slice(1, -1));
        this.mark('dynamic');
        continue;
      }
      if (c === '\\') {
        if (s[this.i + 1] === '\n') {
          this.i += 2;
          continue;
        }
        this.quoted();
        this.text += s[this.i + 1] ?? '';
        this.i += 2;
        continue;
      }
      if (c === "'") {
        const end = s.indexOf("'", this.i + 1);
        this.quoted();
        if (end < 0) {
          this.opaque = true;
          this.text += s.slice(this.i + 1);
          this.i = s.length;
        } else {
          this.text += s.slice(this.i + 1, end);
          this.i = end + 1;
        }
        continue;
      }
      if (c === '"') {
        this.quoted();
        this.i++;
        this.double('"');
        continue;
      }
      if (c === '$') {
        this.dollar(false);
        continue;
      }
      if (c === '`') {
        this.backtick();
        continue;
      }
      if (c === '*' || c === '?' || c === '[') this.mark('glob');
      // Brace expansion (`-{f,x}`, `{a..c}`) turns one word into several: the word is dynamic.
      if (c === '{') this.brace = 1;
      else if (this.brace && (c === ',' || (c === '.' && s[this.i + 1] === '.'))) this.brace = 2;
      else if (c === '}' && this.brace === 2) this.mark('dynamic');
      this.text += c;
      this.i++;
    }
    const eq = this.text.search(/=/);
    const assignment =
      ASSIGNMENT.test(this.text) && (this.firstQuoted < 0 || eq < this.firstQuoted);
    return { type: 'word', word: { text: this.text, kind: this.kind }, assignment };
  }

  /** Inside double quotes (or a heredoc body, `end` null): expansions run, the rest is text. */
  private double(end: '"' | null) {
    const s = this.s;
    while (this.i < s.length) {
      const c = s[this.i]!;
      if (end && c === end) {
        this.i++;
        return;
      }
      if (c === '\\') {
        const next = s[this.i + 1];
        if (next === '\n') this.i += 2;
        else if (next === '$' || next === '`' || next === '"' || next === '\\') {
          this.text += next;
          this.i += 2;
        } else {
          this.text += c;
          this.i++;
        }
        continue;
      }
      if (c === '$') {
        this.dollar(true);
        continue;
      }
      if (c === '`') {
        this.backtick();
        continue;
      }
      this.text += c;
      this.i++;
    }
    if (end) this.opaque = true;
  }

  private dollar(inDouble: boolean) {
    const s = this.s;
    const next = s[this.i + 1];
    if (next === '(') {
      this.i++;
      const inner = this.balanced('(', ')').slice(1, -1);
      // `$((…))` is arithmetic; what it holds is read as a line all the same, for its `$(…)`.
      this.subs.push(inner.startsWith('(') && inner.endsWith(')') ? inner.slice(1, -1) : inner);
      this.mark('dynamic');
      return;
    }
    if (next === '{') {
      this.i++;
      this.subs.push(this.balanced('{', '}').slice(1, -1));
      this.mark('dynamic');
      return;
    }
    if (!inDouble && next === "'") {
      this.quoted();
      this.i += 2;
      this.ansiC();
      return;
    }
    if (!inDouble && next === '"') {
      this.quoted();
      this.i += 2;
      this.double('"');
      return;
    }
    const name = /^(?:[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-])/.exec(s.slice(this.i + 1, this.i + 256));
    if (name) {
      this.i += 1 + name[0].length;
      // `$?`, `$#` and `$$` are always numbers (an exit status, a count, a process id), never
      // a path or a name a rule is about: kept as the text they are (`echo $?` names no
      // credential file). `$!` is not: with no background job it is empty.
      if ('?#$'.includes(name[0])) this.text += `$${name[0]}`;
      else this.mark('dynamic');
      return;
    }
    this.text += '$';
    this.i++;
  }

  /** `$'…'`: bash's ANSI-C quoting, decoded, so `$'\x72m'` reads as `rm`. */
  private ansiC() {
    const s = this.s;
    const simple: Record<string, string> = {
      n: '\n',
      t: '\t',
      r: '\r',
      a: '\x07',
      b: '\b',
      e: '\x1b',
      E: '\x1b',
      f: '\f',
      v: '\v',
      '\\': '\\',
      "'": "'",
      '"': '"',
      '?': '?',
    };
    while (this.i < s.length) {
      const c = s[this.i]!;
      if (c === "'") {
        this.i++;
        return;
      }
      if (c !== '\\') {
        this.text += c;
        this.i++;
        continue;
      }
      const e = s[this.i + 1] ?? '';
      const rest = s.slice(this.i + 2);
      let m: RegExpExecArray | null;
      if (e in simple) {
        this.text += simple[e];
        this.i += 2;
      } else if (e === 'x' && (m = /^[0-9A-Fa-f]{1,2}/.exec(rest))) {
        this.text += String.fromCharCode(parseInt(m[0], 16));
        this.i += 2 + m[0].length;
      } else if (e === 'u' && (m = /^[0-9A-Fa-f]{1,4}/.exec(rest))) {
        this.text += String.fromCodePoint(parseInt(m[0], 16));
        this.i += 2 + m[0].length;
      } else if (e === 'U' && (m = /^[0-9A-Fa-f]{1,8}/.exec(rest))) {
        const code = parseInt(m[0], 16);
        this.text += code <= 0x10ffff ? String.fromCodePoint(code) : '';
        this.i += 2 + m[0].length;
      } else if ((m = /^[0-7]{1,3}/.exec(s.slice(this.i + 1)))) {
        this.text += String.fromCharCode(parseInt(m[0], 8) & 0xff);
        this.i += 1 + m[0].length;
      } else if (e === 'c' && rest.length > 0) {
        this.text += String.fromCharCode(rest.charCodeAt(0) & 0x1f);
        this.i += 3;
      } else {
        this.text += '\\' + e;
        this.i += 2;
      }
    }
    this.opaque = true;
  }

  private backtick() {
    const s = this.s;
    let inner = '';
    let j = this.i + 1;
    for (; j < s.length && s[j] !== '`'; j++) {
      if (s[j] === '\\' && j + 1 < s.length && '`$\\'.includes(s[j + 1]!)) inner += s[++j];
      else inner += s[j];
    }
    if (j >= s.length) this.opaque = true;
    this.subs.push(inner);
    this.mark('dynamic');
    this.i = j + 1;
  }

  /** The text from an opening character to its match, quotes respected; opaque if unclosed. */
  private balanced(open: string, close: string): string {
    const s = this.s;
    const start = this.i;
    let depth = 0;
    for (let j = this.i; j < s.length; j++) {
      const c = s[j]!;
      if (c === '\\') j++;
      else if (c === "'") {
        const end = s.indexOf("'", j + 1);
        if (end < 0) break;
        j = end;
      } else if (c === '"') {
        for (j++; j < s.length && s[j] !== '"'; j++) if (s[j] === '\\') j++;
      } else if (c === open) depth++;
      else if (c === close && --depth === 0) {
        this.i = j + 1;
        return s.slice(start, j + 1);
      }
    }
    this.opaque = true;
    this.i = s.length;
    return s.slice(start) + close;
  }

  private heredoc(strip: boolean) {
    while (this.s[this.i] === ' ' || this.s[this.i] === '\t') this.i++;
    const { word } = this.word();
    const expand = this.firstQuoted < 0;
    if (word.text === '') this.opaque = true;
    this.heredocs.push({ delimiter: word.text, strip, expand });
  }

  /** Heredoc bodies follow the line that opened them: data, but `$(…)` in them runs. */
  private readHeredocBodies() {
    const pending = this.heredocs;
    this.heredocs = [];
    for (const { delimiter, strip, expand } of pending) {
      const bodyStart = this.i;
      let end = -1;
      let next = this.s.length;
      for (let j = this.i; j <= this.s.length;) {
        const eol = this.s.indexOf('\n', j);
        const lineEnd = eol < 0 ? this.s.length : eol;
        const line = this.s.slice(j, lineEnd);
        if ((strip ? line.replace(/^\t+/, '') : line) === delimiter) {
          end = j;
          next = eol < 0 ? this.s.length : eol + 1;
          break;
        }
        if (eol < 0) break;
        j = eol + 1;
      }
      if (end < 0) {
        this.opaque = true;
        end = this.s.length;
      }
      if (expand) {
        const body = new Lexer(this.s.slice(bodyStart, end));
        body.double(null);
        this.subs.push(...body.subs);
        if (body.opaque) this.opaque = true;
      }
      this.i = next;
    }
  }
}

/** Words that start or end a compound command: the command proper follows them. */
const RESERVED = new Set([
  '!',
  '{',
  '}',
  'then',
  'do',
  'else',
  'elif',
  'if',
  'while',
  'until',
  'fi',
  'done',
  'esac',
  'coproc',
]);
/** Words after which a whole segment is data, not a command (`for x in a b`). */
const HEADERS = new Set(['for', 'select', 'case']);
const SEPARATORS = new Set([';', '&', '&&', '||', '|', '|&', '(', ')', '\n', ';;', ';&', ';;&']);

/** The program's name as rules compare it: the last path segment, without `.exe`, lower-case. */
export function programName(word: Word): string {
  const base = word.text.replace(/\\/g, '/').split('/').pop() ?? '';
  return base.replace(/\.(?:exe|cmd|bat|com)$/i, '').toLowerCase();
}

/**
 * Every simple command of a command line, each wrapper's inner command as one more: for
 * `sudo env X=1 git push`, the commands `sudo env X=1 git push`, `env X=1 git push` and
 * `git push`.
 */
export function parseCommandLine(line: string): CommandLine {
  const out: CommandLine = { commands: [], opaque: false, cd: [] };
  readLine(line, 0, out);
  return out;
}

/** The shell words of a line, operators included as words: the summary's `argv`. */
export function shellWords(line: string): string[] {
  return new Lexer(line)
    .run()
    .tokens.map((t) => (t.type === 'op' ? (t.op === '\n' ? ';' : t.op) : t.word.text));
}

function readLine(line: string, depth: number, out: CommandLine): void {
  if (depth > MAX_DEPTH) {
    out.opaque = true;
    return;
  }
  const lexer = new Lexer(line).run();
  if (lexer.opaque) out.opaque = true;
  let segment: { word: Word; assignment: boolean }[] = [];
  const flush = () => {
    const words = commandWords(segment);
    segment = [];
    if (words.length > 0) unwrap(words, depth, out);
  };
  for (const token of lexer.tokens) {
    if (token.type === 'op') {
      if (SEPARATORS.has(token.op)) flush();
    } else if (token.redirect === null) segment.push(token);
    else if (isFileRedirect(token.redirect, token.word) && !push(redirectCommand(token), out)) {
      return;
    }
  }
  flush();
  for (const sub of lexer.subs) readLine(sub, depth + 1, out);
}

/** Targets that are no file a rule cares about: the terminal, the standard streams, nothing. */
const DEVICES = /^\/dev\/(?:null|zero|tty|stdin|stdout|stderr|fd\/\d+)$/;

/**
 * Whether a redirection reads or writes a file: not a here-string (`<<<` takes text), not a
 * descriptor copy or close (`2>&1`, `>&-`), not a device such as /dev/null.
 */
function isFileRedirect(op: string, target: Word): boolean {
  if (op === '<<<') return false;
  if ((op === '>&' || op === '<&') && /^(?:\d+-?|-)$/.test(target.text)) return false;
  return !DEVICES.test(target.text);
}

/**
 * A redirection as a command of its own, the operator then the target (`> ~/.bashrc`), so
 * that rules see the file a line reads or writes although no program's argument names it.
 */
function redirectCommand(token: { word: Word; redirect: string | null }): Word[] {
  return [{ text: token.redirect!, kind: 'literal' }, token.word];
}

/** A segment's command words: reserved words, headers and leading assignments left out. */
function commandWords(segment: { word: Word; assignment: boolean }[]): Word[] {
  let start = 0;
  while (start < segment.length) {
    const { word, assignment } = segment[start]!;
    const literal = word.kind === 'literal';
    // `function f { …`: the name is no command, what follows it is.
    if (literal && word.text === 'function') {
      start += 2;
      continue;
    }
    if (literal && HEADERS.has(word.text)) return [];
    if ((literal && RESERVED.has(word.text)) || assignment) start++;
    else break;
  }
  return segment.slice(start).map((t) => t.word);
}

function push(words: Word[], out: CommandLine): boolean {
  if (out.commands.length >= MAX_COMMANDS) {
    out.opaque = true;
    return false;
  }
  out.commands.push(words);
  return true;
}

const DYNAMIC: Word = { text: '', kind: 'dynamic' };

/** Records a command, then what it runs when it is a wrapper. */
function unwrap(words: Word[], depth: number, out: CommandLine): void {
  if (depth > MAX_DEPTH) {
    out.opaque = true;
    return;
  }
  if (!push(words, out)) return;
  const first = words[0]!;
  if (first.kind === 'dynamic') return;
  const program = programName(first);
  if (program === 'cd' || program === 'pushd') {
    const target = words[afterOptions(words, 1, '')];
    out.cd.push(!target ? { text: '~', kind: 'literal' } : target.text === '-' ? DYNAMIC : target);
    return;
  }
  const wrapper = WRAPPERS[program];
  if (!wrapper) return;
  const inner = wrapper(words);
  if (!inner) return;
  if ('opaque' in inner) out.opaque = true;
  else if ('line' in inner) readLine(inner.line, depth + 1, out);
  else {
    for (const command of inner.commands) {
      // An inner command may begin with assignments too (`sudo FOO=1 git push`).
      let start = 0;
      while (start < command.length && ASSIGNMENT.test(command[start]!.text)) start++;
      if (start < command.length) unwrap(command.slice(start), depth + 1, out);
    }
  }
}

type Inner = { commands: Word[][] } | { line: string } | { opaque: true } | null;

/**
 * The index of a wrapper's first operand after its options. `withArg` lists the short
 * options that take a value (`-u root`), `longWithArg` the long ones (`--user root`); a
 * cluster's value may be attached (`-uroot`). `--` ends the options.
 */
function afterOptions(
  words: Word[],
  start: number,
  withArg: string,
  longWithArg: readonly string[] = [],
): number {
  let i = start;
  while (i < words.length) {
    const w = words[i]!;
    const t = w.text;
    if (w.kind === 'dynamic') return i;
    if (t === '--') return i + 1;
    if (t.startsWith('--')) {
      i += !t.includes('=') && longWithArg.includes(t.slice(2)) ? 2 : 1;
      continue;
    }
    if (!t.startsWith('-') || t === '-') return i;
    let skip = 1;
    for (let k = 1; k < t.length; k++) {
      if (withArg.includes(t[k]!)) {
        if (k === t.length - 1) skip = 2;
        break;
      }
    }
    i += skip;
  }
  return i;
}

const rest = (words: Word[], i: number): Inner => ({ commands: [words.slice(i)] });
const lineOf = (word: Word | undefined): Inner =>
  !word ? null : word.kind === 'dynamic' ? { opaque: true } : { line: word.text };

/**
 * A shell's `-c` string (`bash -lc '…'`, `sh -e -c '…'`); opaque when the shell reads its
 * commands from its input (`curl … | sh`, `bash -s`), which nobody can see; null when it runs
 * a script file.
 */
function shellString(words: Word[]): Inner {
  let i = 1;
  let command = false;
  let stdin = false;
  while (i < words.length) {
    const t = words[i]!.text;
    if (words[i]!.kind === 'dynamic') return command ? lineOf(words[i]) : null;
    if (t === '--' || t === '-') {
      i++;
      break;
    }
    if (t === '-o' || t === '+o' || t === '-O' || t === '+O') {
      i += 2;
      continue;
    }
    if (t === '--rcfile' || t === '--init-file') {
      i += 2;
      continue;
    }
    if (t === '--command' || t === '-command') {
      command = true;
      i++;
      break;
    }
    if (/^[-+][A-Za-z]+$/.test(t)) {
      if (t.startsWith('-') && t.includes('c')) command = true;
      if (t.startsWith('-') && t.includes('s')) stdin = true;
      i++;
      continue;
    }
    if (t.startsWith('--')) {
      i++;
      continue;
    }
    break;
  }
  if (command) return lineOf(words[i]);
  return stdin || i >= words.length ? { opaque: true } : null;
}

/** The inner command of a wrapper; each reads only its own argv. */
const WRAPPERS: Record<string, (words: Word[]) => Inner> = {
  sudo: (w) => rest(w, afterOptions(w, 1, 'ugpCrtUDTh', ['user', 'group', 'prompt', 'chdir'])),
  doas: (w) => rest(w, afterOptions(w, 1, 'uC')),
  nohup: (w) => rest(w, afterOptions(w, 1, '')),
  time: (w) => rest(w, afterOptions(w, 1, 'fo', ['format', 'output'])),
  command: (w) => rest(w, afterOptions(w, 1, '')),
  builtin: (w) => rest(w, 1),
  exec: (w) => rest(w, afterOptions(w, 1, 'a')),
  nice: (w) => rest(w, afterOptions(w, 1, 'n', ['adjustment'])),
  ionice: (w) => rest(w, afterOptions(w, 1, 'cnpPu', ['class', 'classdata'])),
  chrt: (w) => rest(w, afterOptions(w, 1, '') + 1),
  taskset: (w) => rest(w, afterOptions(w, 1, '') + 1),
  setsid: (w) => rest(w, afterOptions(w, 1, '')),
  stdbuf: (w) => rest(w, afterOptions(w, 1, 'ioe', ['input', 'output', 'error'])),
  unbuffer: (w) => rest(w, afterOptions(w, 1, '')),
  caffeinate: (w) => rest(w, afterOptions(w, 1, 'tw')),
  busybox: (w) => rest(w, 1),
  timeout: (w) =>
    rest(w, afterOptions(w, 1, 'sk', ['signal', 'kill-after']) + 1 /* the duration */),
  env: (w) => {
    let i = 1;
    let split: Word | undefined;
    while (i < w.length) {
      const t = w[i]!.text;
      if (w[i]!.kind === 'dynamic') break;
      if (t === '--') {
        i++;
        break;
      }
      if (t === '-S' || t === '--split-string') {
        split = w[i + 1];
        i += 2;
        break;
      }
      if (t.startsWith('-S') || t.startsWith('--split-string=')) {
        split = { text: t.startsWith('-S') ? t.slice(2) : t.slice(15), kind: w[i]!.kind };
        i++;
        break;
      }
      if (/^-[uCP]$/.test(t) || t === '--unset' || t === '--chdir') i += 2;
      else if (t.startsWith('-') && t !== '-') i++;
      else if (ASSIGNMENT.test(t) || t === '-') i++;
      else break;
    }
    if (split) {
      if (split.kind === 'dynamic') return { opaque: true };
      const tail = w.slice(i).map((word) => quoteWord(word.text));
      return { line: [split.text, ...tail].join(' ') };
    }
    return rest(w, i);
  },
  xargs: (w) => {
    const i = afterOptions(w, 1, 'adEeIiLlnPs', [
      'arg-file',
      'delimiter',
      'eof',
      'replace',
      'max-lines',
      'max-args',
      'max-procs',
      'max-chars',
      'process-slot-var',
    ]);
    // xargs puts words read from its input in place of `{}` (-I) or after the command: words
    // nobody can know.
    const inner = i < w.length ? w.slice(i) : [{ text: 'echo', kind: 'literal' as const }];
    return {
      commands: [[...inner.map((x) => (x.text.includes('{}') ? DYNAMIC : x)), DYNAMIC]],
    };
  },
  find: (w) => {
    // Each -exec, -execdir, -ok or -okdir runs the words up to its `;` or `+`, with `{}`
    // standing for each path found: a path under one of find's starting points, so the
    // command is read once per starting point with `{}` as a path below it.
    let i = afterOptions(w, 1, 'D');
    const starts: Word[] = [];
    while (i < w.length && !/^[-(!]/.test(w[i]!.text)) starts.push(w[i++]!);
    if (starts.length === 0) starts.push({ text: '.', kind: 'literal' });
    const commands: Word[][] = [];
    for (; i < w.length; i++) {
      if (!/^-(?:exec|execdir|ok|okdir)$/.test(w[i]!.text)) continue;
      let end = i + 1;
      while (end < w.length && w[end]!.text !== ';' && w[end]!.text !== '+') end++;
      const inner = w.slice(i + 1, end);
      for (const start of starts) {
        commands.push(
          inner.map((x) =>
            !x.text.includes('{}')
              ? x
              : start.kind === 'dynamic'
                ? DYNAMIC
                : {
                    text: x.text.replace(/\{\}/g, `${start.text.replace(/\/+$/, '')}/x`),
                    kind: x.kind,
                  },
          ),
        );
      }
      i = end;
    }
    return commands.length > 0 ? { commands } : null;
  },
  eval: (w) => {
    if (w.slice(1).some((x) => x.kind === 'dynamic')) return { opaque: true };
    return w.length > 1
      ? {
          line: w
            .slice(1)
            .map((x) => x.text)
            .join(' '),
        }
      : null;
  },
  su: (w) => {
    const c = w.findIndex((x) => x.text === '-c' || x.text === '--command');
    if (c >= 0) return lineOf(w[c + 1]);
    const eq = w.find((x) => x.text.startsWith('--command='));
    return eq ? lineOf({ text: eq.text.slice(10), kind: eq.kind }) : null;
  },
  watch: (w) => {
    const i = afterOptions(w, 1, 'nqd', ['interval', 'differences']);
    const words = w.slice(i);
    if (words.some((x) => x.kind === 'dynamic')) return { opaque: true };
    return words.length > 0 ? { line: words.map((x) => x.text).join(' ') } : null;
  },
};
for (const shell of [
  'sh',
  'bash',
  'zsh',
  'dash',
  'ksh',
  'ash',
  'mksh',
  'fish',
  'rbash',
  'tcsh',
  'csh',
  'pwsh',
  'powershell',
]) {
  WRAPPERS[shell] = shellString;
}

/** A word written so that a shell reads it back as exactly this text. */
export function quoteWord(text: string): string {
  if (text !== '' && /^[A-Za-z0-9_@%+=:,./-]+$/.test(text)) return text;
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

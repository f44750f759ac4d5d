// Globs of conditional rules, matched in linear time.
//
// Rules and the paths they are matched against are attacker-controlled (a claim's own
// policyConfig may add rules). picomatch compiles globs to backtracking regular expressions,
// and a glob such as `*a*a*a*b` against a 300-character path takes seconds there; minutes
// with a few more stars. So the dialect is parsed here and run as an automaton over the
// pattern's positions: each character of a path advances a set of positions once, whatever
// the glob. A test holds the dialect to picomatch's (with `dot: true`) on a corpus of globs.

/** One position of a compiled glob. */
type Token =
  | { kind: 'char'; test: (c: string) => boolean }
  | { kind: 'star' } // any run of characters within a segment
  | { kind: 'globstar' } // `**/`: nothing, or any run of segments each ending in `/`
  | { kind: 'tail' } // a trailing `/**`: nothing, or `/` and anything
  | { kind: 'all' }; // a whole `**`: anything

/** How many alternatives brace expansion may give one glob; validation refuses more. */
export const MAX_BRACE_ALTERNATIVES = 64;

/** Brace alternatives of a glob (`a/{b,c}` → `a/b`, `a/c`), or null past the limit. */
export function expandBraces(glob: string): string[] | null {
  const open = findOpen(glob);
  if (open < 0) return [glob];
  const { close, parts } = split(glob, open);
  if (close < 0 || parts.length < 2) {
    // Not a list of alternatives: the braces are literal; expand what follows them.
    const rest = expandBraces(glob.slice(open + 1));
    return rest && rest.map((r) => glob.slice(0, open + 1) + r);
  }
  const out: string[] = [];
  for (const part of parts) {
    const expanded = expandBraces(glob.slice(0, open) + part + glob.slice(close + 1));
    if (!expanded) return null;
    out.push(...expanded);
    if (out.length > MAX_BRACE_ALTERNATIVES) return null;
  }
  return out;
}

/**
 * As in picomatch, a bracket expression also matches its own text (`*[bot]` matches
 * `renovate[bot]`): each closed one gives a second alternative with the brackets escaped.
 */
export function expandBrackets(glob: string): string[] | null {
  for (let i = 0; i < glob.length; i++) {
    if (glob[i] === '\\') {
      i++;
      continue;
    }
    if (glob[i] !== '[') continue;
    const close = glob.indexOf(']', i + 2);
    if (close < 0 || glob.slice(i, close).includes('/')) return [glob];
    const rest = expandBrackets(glob.slice(close + 1));
    if (!rest) return null;
    const head = glob.slice(0, close + 1);
    const escaped = `${glob.slice(0, i)}\\[${glob.slice(i + 1, close)}\\]`;
    const out = rest.flatMap((r) => [head + r, escaped + r]);
    return out.length > MAX_BRACE_ALTERNATIVES ? null : out;
  }
  return [glob];
}

/** Every alternative of a glob (braces, then brackets), or null past the limit. */
export function alternativesOf(glob: string): string[] | null {
  const braces = expandBraces(glob);
  if (!braces) return null;
  const out: string[] = [];
  for (const alternative of braces) {
    const expanded = expandBrackets(alternative);
    if (!expanded) return null;
    out.push(...expanded);
    if (out.length > MAX_BRACE_ALTERNATIVES) return null;
  }
  return out;
}

function findOpen(glob: string): number {
  for (let i = 0; i < glob.length; i++) {
    if (glob[i] === '\\') i++;
    else if (glob[i] === '{') return i;
  }
  return -1;
}

function split(glob: string, open: number): { close: number; parts: string[] } {
  const parts: string[] = [];
  let depth = 0;
  let start = open + 1;
  for (let i = open + 1; i < glob.length; i++) {
    const c = glob[i];
    if (c === '\\') i++;
    else if (c === '{') depth++;
    else if (c === '}') {
      if (depth === 0) {
        parts.push(glob.slice(start, i));
        return { close: i, parts };
      }
      depth--;
    } else if (c === ',' && depth === 0) {
      parts.push(glob.slice(start, i));
      start = i + 1;
    }
  }
  return { close: -1, parts: [] };
}

/** The tokens of one brace-free glob. */
function compile(glob: string): Token[] {
  const segments = glob.split('/');
  if (segments.length === 1 && segments[0] === '**') return [{ kind: 'all' }];
  const tokens: Token[] = [];
  segments.forEach((segment, index) => {
    const last = index === segments.length - 1;
    if (segment === '**') {
      if (last) tokens.push({ kind: 'tail' });
      else tokens.push({ kind: 'globstar' });
      return;
    }
    tokens.push(...segmentTokens(segment));
    const nextIsTail = index === segments.length - 2 && segments[index + 1] === '**';
    if (!last && !nextIsTail) tokens.push(literal('/'));
  });
  return tokens;
}

const literal = (ch: string): Token => ({ kind: 'char', test: (c) => c === ch });

/**
 * The tokens of one segment; `word` reads it as a glob over a whole word instead (a command's
 * argument), where `/` is a character like any other: `*` matches any run, `?` and a bracket
 * expression any character.
 */
function segmentTokens(text: string, word = false): Token[] {
  // By code points, as a value is read: `?` and a literal `😀` are one character each.
  const segment = Array.from(text);
  const tokens: Token[] = [];
  for (let i = 0; i < segment.length; i++) {
    const c = segment[i]!;
    if (c === '\\' && i + 1 < segment.length) {
      tokens.push(literal(segment[++i]!));
    } else if (c === '*') {
      // A run of stars inside a segment is one star.
      while (segment[i + 1] === '*') i++;
      tokens.push({ kind: word ? 'all' : 'star' });
    } else if (c === '?') {
      tokens.push({ kind: 'char', test: (ch) => word || ch !== '/' });
    } else if (c === '[') {
      const parsed = bracket(segment, i, word);
      if (parsed) {
        tokens.push({ kind: 'char', test: parsed.test });
        i = parsed.end;
      } else tokens.push(literal('['));
    } else tokens.push(literal(c));
  }
  return tokens;
}

/** `[abc]`, `[a-z]` or `[^x]`: one character (never `/`), or null when unclosed. */
function bracket(
  segment: readonly string[],
  open: number,
  word: boolean,
): { test: (c: string) => boolean; end: number } | null {
  let i = open + 1;
  // As in picomatch, only `^` negates; a `!` is a member.
  const negated = segment[i] === '^';
  if (negated) i++;
  const ranges: [number, number][] = [];
  const first = i;
  for (; i < segment.length; i++) {
    let c = segment[i]!;
    if (c === ']' && i > first) {
      const test = (ch: string) => {
        const point = ch.codePointAt(0)!;
        return (
          (word || ch !== '/') && ranges.some(([lo, hi]) => point >= lo && point <= hi) !== negated
        );
      };
      return { test, end: i };
    }
    if (c === '\\' && i + 1 < segment.length) c = segment[++i]!;
    if (segment[i + 1] === '-' && i + 2 < segment.length && segment[i + 2] !== ']') {
      let hi = segment[i + 2]!;
      i += 2;
      if (hi === '\\' && i + 1 < segment.length) hi = segment[++i]!;
      ranges.push([c.codePointAt(0)!, hi.codePointAt(0)!]);
    } else ranges.push([c.codePointAt(0)!, c.codePointAt(0)!]);
  }
  return null;
}

/** Counts the steps of every match against one budget, so that a whole evaluation is bounded. */
export class GlobBudget {
  private used = 0;
  constructor(private readonly limit: number) {}
  /** False once the budget is spent; the caller then fails closed. */
  spend(steps: number): boolean {
    this.used += steps;
    return this.used <= this.limit;
  }
  get exhausted(): boolean {
    return this.used > this.limit;
  }
}

/** Thrown inside matching when the budget runs out; caught where a condition is evaluated. */
export class GlobBudgetExhausted extends Error {}

/** A matcher for one brace-free glob: a set of positions advanced once per character. */
function automaton(tokens: Token[]): (value: string, budget: GlobBudget) => boolean {
  const size = tokens.length;
  // Positions 0..size are "before token i"; size+1+i is "inside the globstar or tail at i".
  const states = 2 * size + 2;
  // Two position lists and a mark per position (the step that added it), allocated once per
  // glob: a step allocates nothing and adds each position at most once. Matching is
  // synchronous and never re-entered, so the buffers can be shared between calls.
  let current = new Int32Array(states);
  let next = new Int32Array(states);
  const mark = new Float64Array(states).fill(-1);
  let nextCount = 0;
  let step = 0;
  const add = (i: number) => {
    if (mark[i] === step) return;
    mark[i] = step;
    next[nextCount++] = i;
  };
  // Adds i and what it reaches without a character: stars, globstars, tails and `**` may
  // match nothing.
  const close = (i: number) => {
    while (i <= size) {
      add(i);
      const token = tokens[i];
      if (!token || token.kind === 'char') return;
      i++;
    }
  };
  return (value, budget) => {
    nextCount = 0;
    step++;
    close(0);
    for (const c of value) {
      const swap = current;
      current = next;
      next = swap;
      const count = nextCount;
      nextCount = 0;
      step++;
      if (!budget.spend(count + 1)) throw new GlobBudgetExhausted();
      for (let k = 0; k < count; k++) {
        const state = current[k]!;
        if (state > size) {
          const i = state - size - 1;
          add(state);
          if (tokens[i]!.kind === 'globstar' && c === '/') close(i + 1);
          continue;
        }
        const token = tokens[state];
        if (!token) continue;
        switch (token.kind) {
          case 'char':
            if (token.test(c)) close(state + 1);
            break;
          case 'star':
            if (c !== '/') close(state);
            break;
          case 'globstar':
            add(size + 1 + state);
            if (c === '/') close(state + 1);
            break;
          case 'tail':
            if (c === '/') add(size + 1 + state);
            break;
          case 'all':
            close(state);
            break;
        }
      }
      if (nextCount === 0) return false;
    }
    for (let k = 0; k < nextCount; k++) {
      const state = next[k]!;
      if (state === size) return true;
      if (state > size && tokens[state - size - 1]!.kind === 'tail') return true;
    }
    return false;
  };
}

/**
 * A matcher for a list of globs: a value matches when it matches one of the globs without a
 * leading `!` (or `**`, when every glob has one) and none of those with one. `nocase`
 * compares case-insensitively. Globs are validated (alternativesOf not null) before they get
 * here.
 */
export function globMatcher(
  patterns: readonly string[],
  nocase: boolean,
): (value: string, budget: GlobBudget) => boolean {
  const byList = nocase ? nocaseListMatchers : listMatchers;
  const frozen = Object.isFrozen(patterns);
  let found = frozen ? byList.get(patterns) : undefined;
  if (found === undefined) {
    found = compiledOnce(globMatchers, `${nocase ? 'i' : 's'}\0${patterns.join('\0')}`, () =>
      compileGlobs(patterns, nocase),
    );
    if (frozen) byList.set(patterns, found);
  }
  return found;
}

// The matcher of a frozen list of globs (the built-in policies' configs and every config a
// replay evaluates under are deeply frozen: core/policies.ts, core/evaluation.ts), kept with
// the list so that each evaluation of its rules does not make the list's key again. A list
// that can change is looked up by its text each time.
const listMatchers = new WeakMap<readonly string[], Matcher>();
const nocaseListMatchers = new WeakMap<readonly string[], Matcher>();

type Matcher = (value: string, budget: GlobBudget) => boolean;

/**
 * Compiled matchers by their globs: a policy's rules are matched on every evaluation, and
 * compiling their automata costs more than running them. A matcher is a pure function of its
 * globs (its buffers are shared, matching is never re-entered), so reusing one changes no
 * result. Bounded: the cache starts over past MAX_COMPILED entries (a claim's own rules are
 * attacker-controlled).
 */
const MAX_COMPILED = 2048;
const globMatchers = new Map<string, Matcher>();
const wordMatchers = new Map<string, Matcher>();

export function compiledOnce<T>(
  cache: Map<string, T>,
  key: string,
  compile: () => T,
  max = MAX_COMPILED,
): T {
  let found = cache.get(key);
  if (found === undefined) {
    if (cache.size >= max) cache.clear();
    found = compile();
    cache.set(key, found);
  }
  return found;
}

// An alternative without a special character matches exactly its own text: most alternatives
// of the built-in rules are such (`{npm,pnpm,bun,yarn}`), and a set answers them at once. The
// lookup spends the steps of comparing the value with the longest literal, no more than one
// automaton per literal would.
const LITERAL = /^[^*?[\\]*$/;

/** One matcher for the alternatives of a list of globs: a set for the literal ones. */
function anyOf(alternatives: string[], toAutomaton: (glob: string) => Matcher): Matcher {
  const literals = new Set(alternatives.filter((a) => LITERAL.test(a)));
  const automata = alternatives.filter((a) => !literals.has(a)).map(toAutomaton);
  if (literals.size === 0) return (v, budget) => automata.some((m) => m(v, budget));
  const longest = Math.max(...[...literals].map((literal) => literal.length));
  return (v, budget) => {
    if (!budget.spend(Math.min(v.length, longest) + 1)) throw new GlobBudgetExhausted();
    return literals.has(v) || automata.some((m) => m(v, budget));
  };
}

function compileGlobs(patterns: readonly string[], nocase: boolean): Matcher {
  const fold = (s: string) => (nocase ? s.toLowerCase() : s);
  const compileAll = (list: string[]) =>
    anyOf(
      list.flatMap((p) => alternativesOf(fold(p)) ?? [fold(p)]),
      (p) => automaton(compile(p)),
    );
  const include = patterns.filter((p) => !p.startsWith('!'));
  const exclude = patterns.filter((p) => p.startsWith('!')).map((p) => p.slice(1));
  const included = compileAll(include.length ? include : ['**']);
  const excluded = exclude.length > 0 ? compileAll(exclude) : null;
  return (value, budget) => {
    const v = fold(value);
    return included(v, budget) && !(excluded?.(v, budget) ?? false);
  };
}

/**
 * A matcher for word globs (a command pattern's words): the dialect above with `/` an
 * ordinary character, so `*` also matches `refs/heads/main`; no `**`, no `!` exclusion.
 * Matched against the same step budget.
 */
export function wordMatcher(
  patterns: readonly string[],
  nocase: boolean,
): (value: string, budget: GlobBudget) => boolean {
  return compiledOnce(wordMatchers, `${nocase ? 'i' : 's'}\0${patterns.join('\0')}`, () =>
    compileWords(patterns, nocase),
  );
}

function compileWords(patterns: readonly string[], nocase: boolean): Matcher {
  const fold = (s: string) => (nocase ? s.toLowerCase() : s);
  const matches = anyOf(
    patterns.flatMap((p) => alternativesOf(fold(p)) ?? [fold(p)]),
    (p) => automaton(segmentTokens(p, true)),
  );
  return (value, budget) => matches(fold(value), budget);
}

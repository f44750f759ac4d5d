// Command patterns: what a `command` condition of a rule matches (docs/POLICIES.md, "Command
// patterns"). A pattern is a list of words matched against a simple command's words from the
// start (later words are allowed):
//   - the first word matches the program by its name (`git` matches `/usr/bin/git`, `GIT`
//     and `git.exe`), case-insensitively; a first word with a `/` matches the program as written;
//   - `*` matches one word, `**` any number of words (none included);
//   - `<outside>` matches a path outside the session's project directory, `<project>` the
//     project directory itself (`.`), so that `rm -r <project>` can be told from `rm -r build`;
//   - any other word is a glob over the whole word (`/` is an ordinary character): `*`, `?`,
//     `[a-z]`, `{-f,--force}` alternatives, `+*`, `\` escapes;
//   - a word `-x` (one dash, one letter or digit), or such an alternative of a word
//     (`{-f,--force}`), also matches a cluster of short options holding that letter (`-fu`,
//     `-rf`), as getopt reads them.
// A word the shell expands (`$x`, `$(…)`) matches every pattern word (fail closed).
import { alternativesOf, compiledOnce, type GlobBudget, wordMatcher } from '../rules/glob.js';
import { programName, type Word } from './command-line.js';
import { pathOutside } from './tool-paths.js';

/** A pattern's bounds: validation refuses longer ones. */
export const MAX_PATTERN_WORDS = 32;

type PatternWord =
  | { kind: 'any' }
  | { kind: 'one' }
  | { kind: 'outside' }
  | { kind: 'project' }
  | {
      kind: 'glob';
      matches: (value: string, budget: GlobBudget) => boolean;
      nocaseProgram: (value: string, budget: GlobBudget) => boolean;
      full: boolean;
      options: string;
      dashed: boolean;
    };

export type CommandPattern = PatternWord[];

/**
 * Where a command line runs: the session's project directory, and whether the line changes
 * directory to somewhere else (a `cd` outside it, or one the shell decides: `cd "$d"`).
 */
export interface Place {
  cwd: string | undefined;
  left: boolean;
}

/** The place of a parsed line in a session's project directory. */
export function placeOf(cd: readonly Word[], cwd: string | undefined): Place {
  return {
    cwd,
    left: cd.some((word) => word.kind === 'dynamic' || pathOutside(word.text, cwd, false)),
  };
}

const SPECIAL = new Set(['*', '**', '<outside>', '<project>']);
const wordsOf = (pattern: string) => pattern.trim().split(/\s+/).filter(Boolean);

/** Why a pattern is not valid, or null. */
export function commandPatternProblem(pattern: string): string | null {
  const words = wordsOf(pattern);
  if (words.length === 0) return 'must hold at least one word';
  if (words.length > MAX_PATTERN_WORDS) return `must hold at most ${MAX_PATTERN_WORDS} words`;
  for (const word of words) {
    if (SPECIAL.has(word)) continue;
    if (/^<[a-z-]*>$/.test(word))
      return `word ${JSON.stringify(word)} is not <outside> or <project>`;
    if (alternativesOf(word) === null)
      return `word ${JSON.stringify(word)} has too many alternatives`;
  }
  return null;
}

const compiledPatterns = new Map<string, CommandPattern>();

/** Compiles a validated pattern (once: a compiled pattern is a pure function of its text). */
export function compileCommandPattern(pattern: string): CommandPattern {
  return compiledOnce(compiledPatterns, pattern, () => compile(pattern));
}

function compile(pattern: string): CommandPattern {
  const words = wordsOf(pattern);
  // Validation refuses longer patterns; matchesCommand keeps a pattern's positions in 32 bits.
  if (words.length > MAX_PATTERN_WORDS)
    throw new Error(`a command pattern of ${words.length} words reached matching`);
  return words.map((word): PatternWord => {
    let exact: ReturnType<typeof wordMatcher> | undefined;
    let folded: ReturnType<typeof wordMatcher> | undefined;
    if (word === '**') return { kind: 'any' };
    if (word === '*') return { kind: 'one' };
    if (word === '<outside>') return { kind: 'outside' };
    if (word === '<project>') return { kind: 'project' };
    return {
      kind: 'glob',
      // Each compiled on first use: most words are only ever compared one way.
      matches: (value, budget) => (exact ??= wordMatcher([word], false))(value, budget),
      nocaseProgram: (value, budget) => (folded ??= wordMatcher([word], true))(value, budget),
      full: word.includes('/'),
      options: (alternativesOf(word) ?? [])
        .filter((alternative) => /^-[A-Za-z0-9]$/.test(alternative))
        .map((alternative) => alternative[1])
        .join(''),
      dashed: word.startsWith('-') || word.startsWith('+'),
    };
  });
}

// The program name of a command's first word, read once per word: every pattern of every rule
// compares it, and a parsed word is never changed (parsed lines are kept, core/rules/conditional.ts).
const programNames = new WeakMap<Word, string>();
function programOf(word: Word): string {
  let name = programNames.get(word);
  if (name === undefined) {
    name = programName(word);
    programNames.set(word, name);
  }
  return name;
}

/** Whether one pattern word matches the word at `index` of a command. */
function wordMatches(
  p: PatternWord,
  word: Word,
  index: number,
  place: Place,
  budget: GlobBudget,
): boolean {
  if (p.kind === 'one' || p.kind === 'any') return true;
  if (word.kind === 'dynamic') return true;
  if (p.kind === 'outside' || p.kind === 'project') {
    const { cwd, left } = place;
    // After a `cd` out of the project, a relative path is outside too.
    const relative = !/^(?:[/~]|[A-Za-z]:[\\/])/.test(word.text);
    if (p.kind === 'outside') return (left && relative) || pathOutside(word.text, cwd, false);
    return (
      (left && relative) ||
      (pathOutside(word.text, cwd, true) && !pathOutside(word.text, cwd, false))
    );
  }
  if (index === 0) {
    // A glob as the program (`/usr/bin/g?t`) runs whatever it expands to.
    if (word.kind === 'glob') return true;
    return p.full ? p.nocaseProgram(word.text, budget) : p.nocaseProgram(programOf(word), budget);
  }
  if (p.matches(word.text, budget)) return true;
  if (p.options && /^-[A-Za-z0-9]{2,}$/.test(word.text)) {
    for (const letter of p.options) if (word.text.includes(letter)) return true;
  }
  // An unquoted glob at the start of a word may expand to a file named like an option.
  return word.kind === 'glob' && p.dashed && /^[*?[]/.test(word.text);
}

/**
 * Whether a pattern matches a command: its words, from the first, match the command's
 * (an automaton over the pattern's positions, advanced once per command word, so a pattern
 * of many `**` stays linear). A pattern holds at most MAX_PATTERN_WORDS (32) words, so the
 * positions before its end are the bits of one number.
 */
export function matchesCommand(
  pattern: CommandPattern,
  words: readonly Word[],
  place: Place,
  budget: GlobBudget,
): boolean {
  const size = pattern.length;
  let next = 0;
  let reached = false;
  const close = (i: number) => {
    for (; i < size; i++) {
      next |= 1 << i;
      if (pattern[i]!.kind !== 'any') return;
    }
    reached = true;
  };
  close(0);
  for (let index = 0; index < words.length; index++) {
    if (reached) return true;
    const states = next;
    next = 0;
    for (let state = 0; state < size; state++) {
      if ((states & (1 << state)) === 0) continue;
      const p = pattern[state]!;
      if (p.kind === 'any') close(state);
      else if (wordMatches(p, words[index]!, index, place, budget)) close(state + 1);
    }
    if (next === 0 && !reached) return false;
  }
  return reached;
}

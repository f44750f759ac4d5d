// What rules read of a tool call (contract §12): its command line, paths, URLs and MCP
// server, derived from the input as each harness names them, bounded and redacted. The
// input is attacker-controlled (the agent writes it); the summary must never show less than
// the call does, so whatever the bounds cut, or a redaction reshapes, marks it `incomplete`
// and every condition on it then matches (docs/POLICIES.md, "Tool calls").
import { parseCommandLine, programName, quoteWord, shellWords } from './command-line.js';
import { redactSecrets, redactWords } from './redact.js';
import {
  MAX_ARGV_WORDS,
  MAX_COMMAND_CHARS,
  MAX_TOOL_PATH_CHARS,
  MAX_TOOL_PATHS,
  MAX_TOOL_URLS,
  toolPathProblem,
  type ToolSummary,
} from './tool-call-schema.js';
import { normalizeToolPath, underDir } from './tool-paths.js';
import { MAX_ID_CHARS, MAX_URI_CHARS } from '../limits.js';

/** Input members that hold the command a call runs (a line, or an argv array). */
const COMMAND_KEYS = ['command', 'cmd', 'commandLine', 'command_line'];
/** Input members that hold paths the call reads, writes or runs in (one, or a list). */
const PATH_KEYS = [
  'file_path',
  'filePath',
  'absolute_path',
  'absolutePath',
  'notebook_path',
  'target_file',
  'targetFile',
  'path',
  'paths',
  'file',
  'files',
  'filename',
  'dir_path',
  'directory',
  'dir',
  'relative_workspace_path',
  'target_directory',
  'source',
  'destination',
  'old_path',
  'new_path',
  'workdir',
  'cwd',
];
/** Input members that hold URLs. */
const URL_KEYS = ['url', 'urls', 'uri', 'href', 'link', 'endpoint', 'server_url'];
/** URLs inside text (a command line, a fetch tool's prompt). */
const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]{0,31}:\/\/[^\s'"<>`)]+/gi;
/**
 * How much of one input text the summary reads: four times the command bound, so that a
 * secret cut by the bound is still recognised whole; past it the summary is incomplete.
 */
const MAX_READ_CHARS = 4 * MAX_COMMAND_CHARS;
// Codex's apply_patch names its files in the patch, one header line each. Read as Codex's
// parser reads them (codex-rs/apply-patch/src/parser.rs): lines split at `\n` only, a `\r`
// at the end dropped, each line trimmed before its marker is looked for.
const PATCH_MARKERS = ['*** Add File: ', '*** Update File: ', '*** Delete File: ', '*** Move to: '];
const patchLines = (text: string) => text.split('\n').map((line) => line.replace(/\r$/, '').trim());
/** Characters that end a line for a reader of JS strings but not for Codex's parser. */
// eslint-disable-next-line no-control-regex
const ODD_IN_PATH = /[\u0000-\u001f\u007f\u2028\u2029]/;

/** The files a patch names, and whether one of them holds a character no path should. */
function patchFiles(text: string): { files: string[]; odd: boolean } {
  const files: string[] = [];
  for (const line of patchLines(text)) {
    const marker = PATCH_MARKERS.find((m) => line.startsWith(m));
    if (marker) files.push(line.slice(marker.length));
  }
  return { files, odd: files.some((file) => ODD_IN_PATH.test(file)) };
}

/**
 * A patch in Codex's apply_patch format, whole: its first line `*** Begin Patch`, its last
 * `*** End Patch`. Codex sends it as the `command` of its `apply_patch` tool, where it is no
 * command line; its files are the call's paths. Only that tool's: a shell would run the lines
 * of such a text as commands.
 */
function isPatch(text: string): boolean {
  const lines = patchLines(text);
  while (lines.length > 0 && lines.at(-1) === '') lines.pop();
  return lines[0] === '*** Begin Patch' && lines.at(-1) === '*** End Patch';
}
const isPatchTool = (name: string) => /^apply_?patch$/i.test(name);

const slash = (path: string) => path.replace(/\\/g, '/');
const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const strings = (v: unknown): string[] =>
  typeof v === 'string' ? [v] : Array.isArray(v) ? v.filter((x) => typeof x === 'string') : [];
const isShellTool = (name: string) =>
  /^(?:bash|shell|sh|terminal|run_shell_command|run_terminal_cmd|exec_command|local_shell|powershell)$/i.test(
    name,
  );

/** `mcp__<server>__<tool>`, the name harnesses give an MCP server's tool. */
export function mcpToolOf(name: string): { server: string; tool: string } | null {
  const m = /^mcp__(.+?)__(.+)$/.exec(name);
  return m ? { server: m[1]!, tool: m[2]! } : null;
}

/** Whether `name` is the MCP tool `tool` of some server, as mcpToolOf reads names. */
export const isMcpToolOfAnyServer = (name: string, tool: string): boolean =>
  mcpToolOf(name)?.tool === tool;

/** The programs and word counts of a line's commands: what a redaction must not change. */
const shape = (line: string): string => {
  const parsed = parseCommandLine(line);
  return `${parsed.opaque}|${parsed.commands.map((c) => `${programName(c[0]!)}:${c.length}`).join(',')}`;
};

/** A line with its secrets redacted, and whether the redaction changed how it parses. */
function redactLine(line: string): { text: string; reshaped: boolean } {
  const text = redactSecrets(line);
  return { text, reshaped: text !== line && shape(text) !== shape(line) };
}

/** Whether redacting words changed how they parse as a line (a command hidden in a value). */
const reshaped = (before: readonly string[], after: readonly string[]): boolean =>
  after.some((word, i) => word !== before[i]) &&
  shape(after.map(quoteWord).join(' ')) !== shape(before.map(quoteWord).join(' '));

/**
 * Input members of a shell tool that name the directory its command runs in (Gemini CLI's
 * `run_shell_command` has `dir_path`), as a path relative to where the call runs, or absolute.
 */
const RUN_DIR_KEYS = ['dir_path', 'workdir', 'cwd'];

/**
 * The summary of a call. `cwd` is the session's project directory: paths inside it are
 * written relative to it. `runDir` is the directory the call runs in when the harness reports
 * one apart from the project directory (Codex's `cwd` is the call's working directory):
 * relative paths are read from it, and a command that runs elsewhere than the project
 * directory is summarized as `cd <dir> && <command>`, so that rules judge its words where
 * they run (a `rm -rf build` in `/tmp` deletes outside the project).
 */
export function summarizeToolCall(
  toolName: string,
  toolInput: unknown,
  cwd: string | undefined,
  runDir?: string,
): ToolSummary {
  let input = toolInput;
  // Some harnesses pass a tool's arguments as a JSON text; the digest stays over the text.
  if (typeof input === 'string' && /^\s*\{/.test(input)) {
    try {
      input = JSON.parse(input) as unknown;
    } catch {
      // Not JSON: read as it is.
    }
  }
  const summary: ToolSummary = {};
  let incomplete = false;

  // The command line.
  let line: string | undefined;
  let argv: string[] | undefined;
  const patches: string[] = [];
  const shell = isShellTool(toolName);
  if (typeof input === 'string' && shell) line = input;
  if (isRecord(input)) {
    for (const key of COMMAND_KEYS) {
      const value = input[key];
      if (typeof value === 'string' && isPatchTool(toolName) && isPatch(value)) {
        patches.push(value);
        break;
      }
      if (typeof value === 'string') {
        const args = strings(input.args);
        if (Array.isArray(input.args) && args.length === input.args.length && args.length > 0) {
          argv = [value, ...args];
        } else line = value;
        break;
      }
      if (Array.isArray(value) && value.length > 0) {
        argv = strings(value);
        if (argv.length !== value.length) incomplete = true;
        break;
      }
    }
  }
  // Where the command runs: the directory the harness reported, then the shell tool's own.
  const inputDir =
    shell && isRecord(input)
      ? RUN_DIR_KEYS.map((key) => input[key]).find(
          (v): v is string => typeof v === 'string' && v !== '',
        )
      : undefined;
  const eventDir = runDir === undefined ? undefined : slash(runDir);
  const rawDir = inputDir === undefined ? eventDir : underDir(eventDir, slash(inputDir));
  const shownDir = rawDir === undefined ? null : normalizeToolPath(rawDir, cwd);
  const prefix = shownDir !== null && shownDir !== '.' ? `cd ${quoteWord(shownDir)} && ` : '';
  if (line !== undefined && line.length > MAX_READ_CHARS) {
    line = line.slice(0, MAX_READ_CHARS);
    incomplete = true;
  }
  if (argv) {
    if (argv.some((word) => word.length > MAX_READ_CHARS)) incomplete = true;
    argv = argv.slice(0, MAX_ARGV_WORDS + 1).map((word) => word.slice(0, MAX_READ_CHARS));
    let words = redactWords(argv);
    // The line is the redacted words quoted: it parses back to exactly those words. A secret
    // known by the words around it (`aws_secret_access_key = …`, `Cookie: a=b`) is redacted
    // in the line as in a line given as one, and the words are then the line's.
    line = prefix + words.map(quoteWord).join(' ');
    if (reshaped(argv, words)) incomplete = true;
    const redacted = redactLine(line);
    if (redacted.reshaped) incomplete = true;
    if (redacted.text !== line || prefix !== '') {
      line = redacted.text;
      words = shellWords(line);
    }
    if (words.length > MAX_ARGV_WORDS) incomplete = true;
    if (words.some((w) => w.length > MAX_COMMAND_CHARS)) incomplete = true;
    summary.argv = words.slice(0, MAX_ARGV_WORDS).map((w) => w.slice(0, MAX_COMMAND_CHARS));
    summary.command = line;
  } else if (line !== undefined) {
    line = prefix + line;
    const redacted = redactLine(line);
    if (redacted.reshaped) incomplete = true;
    summary.command = redacted.text;
    const words = shellWords(redacted.text);
    if (words.length > MAX_ARGV_WORDS) incomplete = true;
    summary.argv = words.slice(0, MAX_ARGV_WORDS).map((w) => w.slice(0, MAX_COMMAND_CHARS));
  }
  if (summary.command !== undefined && summary.command.length > MAX_COMMAND_CHARS) {
    summary.command = summary.command.slice(0, MAX_COMMAND_CHARS);
    incomplete = true;
  }

  // Paths.
  const rawPaths: string[] = [];
  if (isRecord(input)) {
    for (const key of PATH_KEYS) {
      // A shell tool's own directory is read from where the call runs; every other path from
      // the directory its command runs in.
      const from = shell && RUN_DIR_KEYS.includes(key) ? eventDir : rawDir;
      for (const path of strings(input[key])) rawPaths.push(underDir(from, slash(path)));
    }
    // Grep's `glob` narrows its path to the files it reads (`.env*` under `.`).
    const glob = input.glob;
    if (typeof glob === 'string' && glob !== '' && typeof input.pattern === 'string') {
      const base = typeof input.path === 'string' ? input.path : '.';
      rawPaths.push(
        underDir(rawDir, glob.startsWith('/') || glob.startsWith('~') ? glob : `${base}/${glob}`),
      );
    }
    for (const key of ['input', 'patch']) {
      const patch = input[key];
      if (typeof patch === 'string' && patch.includes('*** Begin Patch')) patches.push(patch);
    }
  }
  // A patch inside a command (`apply_patch <<'EOF'` in a shell, as Codex runs it, or the word
  // after an apply_patch program): its files are the call's paths too. The command stays a
  // command for every command rule; the paths only add rules that apply, never remove one.
  for (const text of argv ?? (line !== undefined ? [line] : [])) {
    const at = text.indexOf('*** Begin Patch');
    if (at >= 0) patches.push(text.slice(at));
  }
  for (const patch of patches) {
    if (patch.length > MAX_READ_CHARS) incomplete = true;
    const { files, odd } = patchFiles(patch.slice(0, MAX_READ_CHARS));
    // A file name that would read differently here than in Codex is not shown as if it did not.
    if (odd) incomplete = true;
    // Codex applies a patch's files from the call's working directory.
    rawPaths.push(...files.map((file) => underDir(rawDir, slash(file))));
  }
  const paths: string[] = [];
  if (rawPaths.length > MAX_TOOL_PATHS) incomplete = true;
  for (const raw of rawPaths.slice(0, MAX_TOOL_PATHS + 1)) {
    if (raw.length > MAX_TOOL_PATH_CHARS) {
      incomplete = true;
      continue;
    }
    const normalized = normalizeToolPath(slash(raw), cwd);
    if (normalized === null) continue;
    const path = redactSecrets(normalized);
    if (path.length > MAX_TOOL_PATH_CHARS || toolPathProblem(path) !== null) {
      incomplete = true;
      continue;
    }
    if (!paths.includes(path)) paths.push(path);
  }
  if (paths.length > MAX_TOOL_PATHS) incomplete = true;
  if (paths.length > 0) summary.paths = paths.slice(0, MAX_TOOL_PATHS);

  // URLs: in URL members, the command line, and a fetch tool's prompt.
  const rawUrls: string[] = [];
  if (isRecord(input)) {
    for (const key of URL_KEYS) rawUrls.push(...strings(input[key]));
    if (/fetch/i.test(toolName)) {
      for (const text of strings(input.prompt)) {
        rawUrls.push(...(text.slice(0, MAX_READ_CHARS).match(URL_IN_TEXT) ?? []));
      }
    }
  }
  if (line !== undefined) rawUrls.push(...(line.match(URL_IN_TEXT) ?? []));
  const urls: string[] = [];
  if (rawUrls.length > MAX_TOOL_URLS) incomplete = true;
  for (const raw of rawUrls.slice(0, MAX_TOOL_URLS + 1)) {
    if (raw.length > MAX_URI_CHARS) {
      incomplete = true;
      continue;
    }
    const url = redactSecrets(raw.trim());
    if (url === '') continue;
    if (url.length > MAX_URI_CHARS) {
      incomplete = true;
      continue;
    }
    if (!urls.includes(url)) urls.push(url);
  }
  if (urls.length > MAX_TOOL_URLS) incomplete = true;
  if (urls.length > 0) summary.urls = urls.slice(0, MAX_TOOL_URLS);

  // The MCP server and tool.
  const mcp = mcpToolOf(toolName);
  if (mcp) {
    summary.mcp_server = mcp.server.slice(0, MAX_ID_CHARS);
    summary.mcp_tool = mcp.tool.slice(0, MAX_ID_CHARS);
  }
  if (incomplete) summary.incomplete = true;
  return summary;
}

/**
 * A summary as a caller wrote it (a tool-call claim sent as it is, not built here from the
 * input), its secrets replaced as the builder replaces them, before anything is stored or
 * signed (contract §12). Where a redaction changes how the command line parses, or leaves a
 * path or URL past its bound or out of the one spelling, the summary is marked incomplete,
 * as the builder marks it, and what no longer fits is left out. A summary with nothing to
 * redact, such as every summary the builder made, comes back as the same object.
 */
export function redactSummary(summary: ToolSummary): ToolSummary {
  const out: ToolSummary = { ...summary };
  let changed = false;
  let incomplete = false;
  const { command, argv, paths, urls } = summary;
  if (command !== undefined) {
    const { text, reshaped: changedParse } = redactLine(command);
    if (text !== command) {
      changed = true;
      if (changedParse || text.length > MAX_COMMAND_CHARS) incomplete = true;
      out.command = text.slice(0, MAX_COMMAND_CHARS);
    }
  }
  if (argv !== undefined) {
    const words = redactWords(argv);
    if (words.some((word, i) => word !== argv[i])) {
      changed = true;
      if (reshaped(argv, words)) incomplete = true;
      if (words.some((word) => word.length > MAX_COMMAND_CHARS)) incomplete = true;
      out.argv = words.map((word) => word.slice(0, MAX_COMMAND_CHARS));
    }
  }
  const redactEach = (values: string[], fits: (value: string) => boolean) => {
    const kept: string[] = [];
    for (const value of values) {
      const redacted = redactSecrets(value);
      if (redacted !== value) changed = true;
      if (fits(redacted)) kept.push(redacted);
      else incomplete = true;
    }
    return kept;
  };
  if (paths !== undefined) {
    const kept = redactEach(
      paths,
      (p) => p.length <= MAX_TOOL_PATH_CHARS && toolPathProblem(p) === null,
    );
    if (kept.length > 0) out.paths = kept;
    else delete out.paths;
  }
  if (urls !== undefined) {
    const kept = redactEach(urls, (u) => u.length <= MAX_URI_CHARS);
    if (kept.length > 0) out.urls = kept;
    else delete out.urls;
  }
  if (!changed) return summary;
  if (incomplete) out.incomplete = true;
  return out;
}

import { z } from 'zod';
import { MAX_ID_CHARS, MAX_URI_CHARS } from '../limits.js';

// The members of a tool-call claim (contract §12): `action.tool` and `action.session`. Bounds
// sit beside the claim's others (limits.ts, claim-types.ts) and are listed in docs/POLICIES.md.

/** A shell command line in a summary: the contract's bound. */
export const MAX_COMMAND_CHARS = 4096;
/** The words of a command line in a summary: the contract's bound. */
export const MAX_ARGV_WORDS = 256;
/** Paths of one call, each at most MAX_TOOL_PATH_CHARS (the claim's path bound). */
export const MAX_TOOL_PATHS = 256;
export const MAX_TOOL_PATH_CHARS = 1024;
/** URLs of one call, each at most MAX_URI_CHARS. */
export const MAX_TOOL_URLS = 64;

/** `claude-code`, `codex`, `cursor`, `gemini-cli`, `copilot`, `mcp`, `authzen`, … */
export const HARNESS_NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;

const harness = () =>
  z.string().regex(HARNESS_NAME, {
    error: 'must be 1-64 characters of a-z, 0-9, ".", "_" or "-", starting with a letter or digit',
  });
const id = () => z.string().min(1, { error: 'must not be empty' }).max(MAX_ID_CHARS);

/**
 * Why a path of a tool call's summary is not in the one spelling rules match, or null when it
 * is: absolute (`/…`, or a Windows drive `C:/…`), home-relative (`~`, `~/…`, `~user/…`) or
 * relative to the session's project directory; `/` between segments; no empty or `.` segment;
 * `..` only leading a relative path (a path the builder could not place under a project
 * directory). Attacker-controlled when a claim is written by hand: `src/../.env` would slip
 * past `**\/.env`, so it is refused, not guessed at.
 */
export function toolPathProblem(path: string): string | null {
  if (path.includes('\\')) return 'must use / as separator, never a backslash';
  if (path.includes('\0')) return 'must not hold a NUL character';
  const rooted = /^(?:[A-Za-z]:)?\//.exec(path);
  const body = rooted ? path.slice(rooted[0].length) : path;
  if (body === '' || path === '.') return null;
  const segments = body.split('/');
  let leading = !rooted && !path.startsWith('~');
  for (const segment of segments) {
    if (segment === '') return 'must not hold an empty segment (// or a trailing /)';
    if (segment === '.') return 'must not hold a . segment';
    if (segment === '..') {
      if (!leading) return 'must not hold a .. segment after a name';
      continue;
    }
    leading = false;
  }
  return null;
}

const toolPath = () =>
  z
    .string()
    .min(1, { error: 'must not be empty' })
    .max(MAX_TOOL_PATH_CHARS)
    .superRefine((value, ctx) => {
      const problem = toolPathProblem(value);
      if (problem) ctx.addIssue({ code: 'custom', message: `${JSON.stringify(value)} ${problem}` });
    });

/** What rules read of a tool call: derived from its input, secrets redacted (contract §12). */
export const toolSummarySchema = z
  .strictObject({
    command: z
      .string()
      .max(MAX_COMMAND_CHARS, { error: `must be at most ${MAX_COMMAND_CHARS} characters` })
      .optional()
      .meta({
        description:
          'The shell command line the call runs (an argv array given by the harness is quoted into one).',
      }),
    argv: z
      .array(z.string().max(MAX_COMMAND_CHARS))
      .max(MAX_ARGV_WORDS, { error: `must hold at most ${MAX_ARGV_WORDS} words` })
      .optional()
      .meta({
        description:
          "The command's words: as the harness gave them, or the shell words of `command`.",
      }),
    paths: z
      .array(toolPath())
      .max(MAX_TOOL_PATHS, { error: `must hold at most ${MAX_TOOL_PATHS} paths` })
      .optional()
      .meta({
        description:
          "Files and directories the call reads, writes or runs in: relative to the session's cwd when inside it, else absolute or `~/…`.",
      }),
    urls: z
      .array(z.string().min(1).max(MAX_URI_CHARS))
      .max(MAX_TOOL_URLS, { error: `must hold at most ${MAX_TOOL_URLS} URLs` })
      .optional(),
    mcp_server: id().optional(),
    mcp_tool: id().optional(),
    incomplete: z.boolean().optional().meta({
      description:
        'True when the summary does not carry the whole input (it held more than the bounds let through, or redacting a secret changed how its command line parses): every condition on command, tool_paths, outside_project and urls then matches (fail closed).',
    }),
  })
  .meta({ id: 'ToolSummary' });

/** `action.tool` of a tool-call claim (contract §12). */
export const toolCallSchema = z
  .strictObject({
    harness: harness(),
    name: id().meta({ description: 'The tool as the harness names it (`mcp__<server>__<tool>`).' }),
    input_digest: z
      .string()
      .regex(/^sha256:[0-9a-f]{64}$/, { error: 'must be "sha256:" and 64 lowercase hex digits' })
      .meta({ description: "sha256: + hex SHA-256 over the JCS bytes of the tool's input." }),
    summary: toolSummarySchema,
    input: z.unknown().optional().meta({
      description:
        'The raw input, only when the operator stores inputs (SVC_AGENT_STORE_INPUTS=true); never read by rules.',
    }),
  })
  .meta({ id: 'ToolCall' });

/** `action.session`: the harness's session (contract §12). */
export const agentSessionSchema = z
  .strictObject({
    id: id(),
    harness: harness(),
    cwd: z
      .string()
      .min(1)
      .max(MAX_TOOL_PATH_CHARS)
      .regex(/^(?:[A-Za-z]:)?\//, { error: 'must be an absolute path' })
      .optional()
      .meta({ description: "The session's project directory, absolute." }),
  })
  .meta({ id: 'AgentSession' });

export type ToolSummary = z.infer<typeof toolSummarySchema>;
export type ToolCall = z.infer<typeof toolCallSchema>;
export type AgentSession = z.infer<typeof agentSessionSchema>;

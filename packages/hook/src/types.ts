/** The harnesses whose hooks this package speaks, by the name their endpoint carries. */
export const HARNESS_NAMES = [
  'claude-code',
  'codex',
  'cursor',
  'gemini-cli',
  'copilot',
  'mcp',
] as const;
export type HarnessName = (typeof HARNESS_NAMES)[number];

/** What a hook event is about, whatever the harness calls it. */
export type HookEventKind = 'pre_tool' | 'post_tool' | 'session_start' | 'session_end' | 'other';

/** A hook event in one shape for every harness. */
export interface HookEvent {
  kind: HookEventKind;
  /** The event's name as the harness sent or configured it (`PreToolUse`, `beforeShellExecution` …). */
  hook_event: string;
  session: { id: string; cwd?: string };
  tool?: {
    /** As the harness names the tool; an MCP tool as `mcp__<server>__<tool>`. */
    name: string;
    /** The tool's input exactly as the harness sent it (see each harness for what that is). */
    input: unknown;
    use_id?: string;
    /**
     * An MCP tool (its name as the harness gives it) in an event that does not name its server:
     * `name` then says `unknown` for the server, and an outcome pairs with the latest decision
     * on this tool of any server.
     */
    any_mcp_server?: string;
  };
  /**
   * A session start's source or a session end's reason, as the harness gives it (`startup`,
   * `resume`, `clear`, `exit`, `completed`, …).
   */
  session_reason?: string;
  /** What a post-tool event reports about the call that ran. */
  outcome?: { status: 'succeeded' | 'failed'; exit_code?: number; output?: unknown };
  /**
   * The agent, named as svc's claims name it: the harness; for svc's MCP gateway (`mcp`), the
   * MCP client's name from its initialize request when it gave one.
   */
  agent: string;
  model?: string;
  transcript_path?: string;
  permission_mode?: string;
}

/** A parse mismatch is a value, not an exception: the body is attacker-controlled input. */
export type ParseResult = { ok: true; event: HookEvent } | { ok: false; error: string };

/** Options a caller may know better than the body: the event a hook was configured for. */
export interface ParseOptions {
  /** The harness's event name, when the body does not carry it (Copilot's camelCase payloads). */
  event?: string;
}

/** svc's decision on a pre-tool event, as the hook endpoint hands it to `answer`. */
export interface HookDecision {
  verdict: 'ALLOWED' | 'BLOCKED' | 'ESCALATED';
  reasons: string[];
  receipt_url?: string;
  receipt_id?: string;
  /** The receipt of the disposition that approved this exact call, when one allowed it. */
  approval_receipt_id?: string;
  /** Whether the operator can be asked now (an interactive session, not a headless run). */
  can_ask: boolean;
  /** The event being answered (HookEvent.hook_event), for harnesses whose answer depends on it. */
  hook_event?: string;
}

/** What a hook writes: `body` as JSON on stdout (or as the HTTP hook's response body). */
export interface HookAnswer {
  body: Record<string, unknown>;
  /** The command hook's exit status. */
  exit_code: number;
  /** Text for standard error, where the harness reads a reason from it (with exit code 2). */
  stderr?: string;
}

/** One harness: how its events read and how it is answered. */
export interface Harness {
  name: HarnessName;
  parseEvent(body: unknown, options?: ParseOptions): ParseResult;
  /** The answer to a pre-tool event, in the harness's own output shape. */
  answer(decision: HookDecision): HookAnswer;
  /** Whether the harness can ask its operator at this pre-tool event (an ESCALATED answer). */
  asks(hookEvent: string | undefined): boolean;
  /** What an event of this name is, whether or not its body can be read. */
  kindOf(hookEvent: string): HookEventKind;
  /** The answer to an event that asks nothing (post-tool, session start and end). */
  acknowledge(): HookAnswer;
  /** A denial for when no decision could be had (svc unreachable, a bad answer …). */
  failClosed(message: string): HookAnswer;
  /** Letting the call through without a decision: only when the operator configured it. */
  failOpen(message: string): HookAnswer;
  /** Whether a body is a well-formed answer of this harness (what svc-hook accepts from svc). */
  isAnswer(body: unknown): body is Record<string, unknown>;
  /** The reason an answer carries, for standard error when the exit status is 2. */
  reasonOf(body: Record<string, unknown>): string | undefined;
}

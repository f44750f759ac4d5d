import { randomUUID } from 'node:crypto';
import { hashCanonical } from '@svc/verify';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { buildToolCallClaim } from '../../core/agent/tool-call-claim.js';
import { HOOK_DEFAULT_POLICY } from '../../services/agent-hooks.js';
import type { GatewayConfig } from './config.js';
import type { DryRunResult, GateAnswer, GatewayHookEvent, SvcGate } from './svc-gate.js';
import { ToolVisibility } from './tool-visibility.js';
import { Upstream } from './upstream.js';

// The gateway: one MCP server in front of several. tools/list names every upstream tool
// `<server>__<tool>`, less those the policy blocks by name (tool-visibility.ts); resources and prompts pass through (prompts named like tools). Every
// tools/call is a tool-call claim decided by svc before it reaches the upstream (contract
// §12): allowed calls are forwarded and their outcome recorded; denied and escalated ones
// come back as tool errors naming the receipt. The low-level SDK Server, not McpServer: a
// proxy serves other servers' JSON schemas, which McpServer's zod-typed tools cannot.

/** The separator between a server's name and its tools' and prompts' names. */
export const SEPARATOR = '__';

export interface GatewayOptions {
  config: GatewayConfig;
  gate: SvcGate;
  version: string;
  /** The session the calls are claims of: one per gateway process (one MCP connection). */
  sessionId: string;
  cwd: string;
  /** Per-call timeout of an upstream tools/call, in ms. */
  callTimeoutMs: number;
  /** Timeout of connecting to and listing an upstream, in ms. */
  upstreamTimeoutMs: number;
  /** Bound on a call's arguments (their JSON), below what svc's hook endpoint accepts. */
  maxArgumentBytes: number;
  /** List every upstream tool, also those the policy blocks by name (`--show-all-tools`). */
  showAllTools?: boolean;
  log: (line: string) => void;
}

/** `<server>__<tool>` split at the first separator (a server name holds none). */
export function splitName(name: string): { server: string; inner: string } | null {
  const at = name.indexOf(SEPARATOR);
  if (at <= 0 || at + SEPARATOR.length >= name.length) return null;
  return { server: name.slice(0, at), inner: name.slice(at + SEPARATOR.length) };
}

function toolError(text: string, meta?: Record<string, unknown>): CallToolResult {
  return {
    content: [{ type: 'text', text }],
    isError: true,
    ...(meta && { _meta: meta }),
  };
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** The digest of a result, when it has a canonical JSON form. */
function resultDigest(result: CallToolResult): string | undefined {
  try {
    return hashCanonical(result);
  } catch {
    return undefined;
  }
}

/** What the agent reads on a deny or an escalation, and svc's facts for a client to act on. */
function refusal(answer: GateAnswer): CallToolResult {
  const meta = {
    'svc/decision': {
      verdict: answer.verdict,
      ...(answer.receipt_id && { receipt_id: answer.receipt_id }),
      ...(answer.receipt_url && { receipt_url: answer.receipt_url }),
    },
  };
  return toolError(answer.reason, meta);
}

export class McpGateway {
  readonly server: Server;
  private readonly upstreams = new Map<string, Upstream>();
  /** Which upstream a resource URI came from, as the last resources/list said. */
  private readonly resourceOwners = new Map<string, string>();
  /** Outcome reports still on their way to svc, awaited when the gateway closes. */
  private readonly reporting = new Set<Promise<void>>();
  /** Which tools tools/list leaves out; none with `showAllTools`. */
  private readonly visibility: ToolVisibility | undefined;

  constructor(private readonly options: GatewayOptions) {
    this.server = new Server(
      { name: 'svc-mcp-gateway', version: options.version },
      {
        capabilities: { tools: { listChanged: true }, resources: {}, prompts: {} },
        instructions:
          'Tools are named <server>__<tool>. Every tool call is decided by svc under its policy before it runs; a denied call returns an error naming the receipt, and a call awaiting approval says where a reviewer approves it: after the approval, the same call with the same arguments succeeds once.',
      },
    );
    for (const [name, spec] of options.config.servers) {
      this.upstreams.set(
        name,
        new Upstream(name, spec, {
          clientInfo: { name: 'svc-mcp-gateway', version: options.version },
          timeoutMs: options.upstreamTimeoutMs,
          log: options.log,
          onToolsChanged: () => void this.server.sendToolListChanged().catch(() => undefined),
        }),
      );
    }
    if (!options.showAllTools) {
      this.visibility = new ToolVisibility({
        dryRun: (toolName) => this.dryRun(toolName),
        ttlMs: 60_000,
        parallel: 8,
        log: options.log,
      });
    }
    this.server.setRequestHandler(ListToolsRequestSchema, () => this.listTools());
    this.server.setRequestHandler(CallToolRequestSchema, (request, extra) =>
      this.callTool(request.params, extra),
    );
    this.server.setRequestHandler(ListResourcesRequestSchema, () => this.listResources());
    this.server.setRequestHandler(ListResourceTemplatesRequestSchema, () => this.listTemplates());
    this.server.setRequestHandler(ReadResourceRequestSchema, (request) =>
      this.readResource(request.params.uri),
    );
    this.server.setRequestHandler(ListPromptsRequestSchema, () => this.listPrompts());
    this.server.setRequestHandler(GetPromptRequestSchema, (request) =>
      this.getPrompt(request.params.name, request.params.arguments),
    );
  }

  /** Starts connecting to every upstream, without waiting: requests wait for their own. */
  warmUp(): void {
    for (const upstream of this.upstreams.values()) {
      upstream
        .ready()
        .catch((error: unknown) =>
          this.options.log(`upstream ${upstream.name} cannot be started: ${messageOf(error)}`),
        );
    }
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.reporting]);
    await Promise.all([...this.upstreams.values()].map((u) => u.close()));
    await this.server.close().catch(() => undefined);
  }

  /** Each upstream's items; one that fails is logged and left out, the others still answer. */
  private async gather<T>(what: string, list: (u: Upstream) => Promise<T[]>) {
    const results = await Promise.all(
      [...this.upstreams.values()].map(async (upstream) => {
        try {
          return { upstream, items: await list(upstream) };
        } catch (error) {
          this.options.log(`upstream ${upstream.name}: ${what} failed: ${messageOf(error)}`);
          return { upstream, items: [] as T[] };
        }
      }),
    );
    return results;
  }

  private async listTools(): Promise<{ tools: Tool[] }> {
    const all = await this.gather('tools/list', (u) => u.listTools());
    const tools = all.flatMap(({ upstream, items }) =>
      items.map((tool) => ({
        tool: { ...tool, name: `${upstream.name}${SEPARATOR}${tool.name}` },
        claimed: `mcp__${upstream.name}__${tool.name}`,
      })),
    );
    const hidden = this.visibility
      ? await this.visibility.blocked(tools.map((t) => t.claimed))
      : new Set<string>();
    return { tools: tools.filter((t) => !hidden.has(t.claimed)).map((t) => t.tool) };
  }

  /**
   * svc's dry run of a call of the tool with empty arguments: the claim the hook endpoint
   * would build for it (same harness, session, agent and policy), sent to /v1/simulate.
   */
  private async dryRun(toolName: string): Promise<DryRunResult> {
    let claim;
    try {
      ({ claim } = buildToolCallClaim({
        harness: 'mcp',
        session: { id: this.options.sessionId, cwd: this.options.cwd },
        agent: this.server.getClientVersion()?.name.slice(0, 256) || 'mcp',
        tool_name: toolName,
        tool_input: {},
        tool_use_id: `list-${randomUUID()}`,
      }));
    } catch (error) {
      return { ok: false, problem: `no claim for ${toolName}: ${messageOf(error)}` };
    }
    return this.options.gate.dryRun({
      ...claim,
      policy: this.options.gate.policy ?? HOOK_DEFAULT_POLICY,
    });
  }

  private upstreamOf(name: string, what: string): { upstream: Upstream; inner: string } {
    const split = splitName(name);
    const upstream = split && this.upstreams.get(split.server);
    if (!split || !upstream) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `unknown ${what} "${name.slice(0, 200)}": names are <server>${SEPARATOR}<name>, servers ${[...this.upstreams.keys()].join(', ')}`,
      );
    }
    return { upstream, inner: split.inner };
  }

  private async callTool(
    params: {
      name: string;
      arguments?: Record<string, unknown>;
      _meta?: { progressToken?: string | number };
    },
    extra: {
      signal: AbortSignal;
      sendNotification: (n: {
        method: 'notifications/progress';
        params: Record<string, unknown>;
      }) => Promise<void>;
    },
  ): Promise<CallToolResult> {
    const { upstream, inner } = this.upstreamOf(params.name, 'tool');
    const args = params.arguments ?? {};
    // Bounded before anything is asked or recorded: svc's hook endpoint takes 1 MiB bodies.
    const size = Buffer.byteLength(JSON.stringify(args));
    if (size > this.options.maxArgumentBytes) {
      return toolError(
        `svc mcp-gateway: refused ${params.name}: its arguments are ${size} bytes of JSON, more than the gateway's limit of ${this.options.maxArgumentBytes}; the call was not made`,
      );
    }
    try {
      if (!(await upstream.hasTool(inner))) {
        throw new McpError(ErrorCode.InvalidParams, `unknown tool "${params.name.slice(0, 200)}"`);
      }
    } catch (error) {
      if (error instanceof McpError && error.code === ErrorCode.InvalidParams) throw error;
      return toolError(
        `svc mcp-gateway: the server "${upstream.name}" is not available: ${messageOf(error)}; the call was not made`,
      );
    }

    const event: GatewayHookEvent = {
      hook_event_name: 'PreToolUse',
      session_id: this.options.sessionId,
      cwd: this.options.cwd,
      tool_name: `mcp__${upstream.name}__${inner}`,
      tool_input: args,
      tool_use_id: `call-${randomUUID()}`,
    };
    const agent = this.server.getClientVersion()?.name;
    if (agent) event.agent = agent.slice(0, 256);

    const decided = await this.options.gate.decide(event);
    if (!decided.ok) {
      this.options.log(`${params.name}: refused without a decision: ${decided.problem}`);
      return toolError(
        `svc mcp-gateway: refused ${params.name} because svc's decision could not be had: ${decided.problem}; the call was not made`,
      );
    }
    const { answer } = decided;
    if (answer.decision !== 'allow') return refusal(answer);

    const progressToken = params._meta?.progressToken;
    // Progress is relayed in order, and all of it before the result: a client drops progress
    // that arrives after the response it belongs to.
    let relayed = Promise.resolve();
    let result: CallToolResult;
    try {
      result = await upstream.callTool(inner, args, {
        signal: extra.signal,
        timeout: this.options.callTimeoutMs,
        ...(progressToken !== undefined && {
          resetTimeoutOnProgress: false,
          onprogress: (progress) => {
            relayed = relayed
              .then(() =>
                extra.sendNotification({
                  method: 'notifications/progress',
                  params: { ...progress, progressToken },
                }),
              )
              .catch(() => undefined);
          },
        }),
      });
      await relayed;
    } catch (error) {
      const timedOut = error instanceof McpError && error.code === ErrorCode.RequestTimeout;
      const problem = timedOut
        ? `the server "${upstream.name}" did not answer within ${this.options.callTimeoutMs} ms`
        : `the server "${upstream.name}" failed: ${messageOf(error)}`;
      this.options.log(`${params.name}: ${problem}`);
      this.record(event, { isError: true });
      return toolError(
        `svc mcp-gateway: ${params.name} was allowed (receipt ${answer.receipt_id ?? '?'}), but ${problem}`,
      );
    }
    const digest = resultDigest(result);
    this.record(event, {
      isError: result.isError === true,
      ...(digest && { result_digest: digest }),
    });
    return {
      ...result,
      _meta: {
        ...result._meta,
        'svc/decision': {
          verdict: answer.verdict,
          ...(answer.receipt_id && { receipt_id: answer.receipt_id }),
          ...(answer.receipt_url && { receipt_url: answer.receipt_url }),
        },
      },
    };
  }

  /** The call's outcome, recorded without holding up its result. */
  private record(
    event: GatewayHookEvent,
    response: NonNullable<GatewayHookEvent['tool_response']>,
  ) {
    const done = this.options.gate
      .report({ ...event, hook_event_name: 'PostToolUse', tool_response: response })
      .then((problem) => {
        if (problem) this.options.log(`${event.tool_name}: outcome not recorded: ${problem}`);
      })
      .finally(() => this.reporting.delete(done));
    this.reporting.add(done);
  }

  private async listResources() {
    const all = await this.gather('resources/list', (u) => u.listResources());
    const resources = [];
    for (const { upstream, items } of all) {
      for (const resource of items) {
        // Bounded: a server listing without end must not grow the gateway without end.
        if (this.resourceOwners.size < 100_000)
          this.resourceOwners.set(resource.uri, upstream.name);
        resources.push(resource);
      }
    }
    return { resources };
  }

  private async listTemplates() {
    const all = await this.gather('resources/templates/list', (u) => u.listResourceTemplates());
    return { resourceTemplates: all.flatMap(({ items }) => items) };
  }

  /** Read from the server that listed the URI; else from each server with resources in turn. */
  private async readResource(uri: string) {
    const owner = this.resourceOwners.get(uri);
    const candidates = owner ? [this.upstreams.get(owner)!] : [...this.upstreams.values()];
    let last: unknown;
    for (const upstream of candidates) {
      try {
        if (!owner && !(await upstream.supports('resources'))) continue;
        const client = await upstream.ready();
        return await client.readResource({ uri }, { timeout: this.options.callTimeoutMs });
      } catch (error) {
        last = error;
      }
    }
    if (last instanceof McpError) throw last;
    throw new McpError(
      ErrorCode.InvalidParams,
      `resource not found: ${uri.slice(0, 200)}${last ? ` (${messageOf(last)})` : ''}`,
    );
  }

  private async listPrompts() {
    const all = await this.gather('prompts/list', (u) => u.listPrompts());
    return {
      prompts: all.flatMap(({ upstream, items }) =>
        items.map((prompt) => ({ ...prompt, name: `${upstream.name}${SEPARATOR}${prompt.name}` })),
      ),
    };
  }

  private async getPrompt(name: string, args: Record<string, string> | undefined) {
    const { upstream, inner } = this.upstreamOf(name, 'prompt');
    const client = await upstream.ready();
    return client.getPrompt(
      { name: inner, ...(args && { arguments: args }) },
      { timeout: this.options.callTimeoutMs },
    );
  }
}

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  StdioClientTransport,
  getDefaultEnvironment,
} from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  ToolListChangedNotificationSchema,
  type CallToolResult,
  type Prompt,
  type Resource,
  type ResourceTemplate,
  type ServerCapabilities,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { UpstreamSpec } from './config.js';

// One upstream MCP server behind the gateway, through the SDK's Client. A server that exits
// or drops its connection is reconnected (a stdio server started again) on the next request
// that needs it, so one crash costs the calls in flight, not the gateway.

/** A paginated list is read to its end, within reason. */
const MAX_PAGES = 50;

export interface UpstreamOptions {
  clientInfo: { name: string; version: string };
  /** How long connecting and listing may take, in ms. */
  timeoutMs: number;
  log: (line: string) => void;
  /** Told when the server says its tools changed. */
  onToolsChanged: () => void;
}

export class Upstream {
  private client: Client | undefined;
  private connecting: Promise<Client> | undefined;
  private tools = new Set<string>();

  constructor(
    readonly name: string,
    private readonly spec: UpstreamSpec,
    private readonly options: UpstreamOptions,
  ) {}

  private transport() {
    const { spec } = this;
    if (spec.kind === 'stdio') {
      return new StdioClientTransport({
        command: spec.command,
        args: spec.args,
        // As MCP clients do: a safe default environment plus the server's own variables.
        env: { ...getDefaultEnvironment(), ...spec.env },
        ...(spec.cwd !== undefined && { cwd: spec.cwd }),
        // The server's log lines join the gateway's on stderr; stdout is the protocol.
        stderr: 'inherit',
      });
    }
    return new StreamableHTTPClientTransport(new URL(spec.url), {
      requestInit: { headers: spec.headers },
    });
  }

  private async connect(): Promise<Client> {
    const client = new Client(this.options.clientInfo, { capabilities: {} });
    client.onclose = () => {
      if (this.client === client) {
        this.client = undefined;
        this.options.log(`upstream ${this.name} closed; it is reconnected when next needed`);
      }
    };
    client.onerror = (error) => this.options.log(`upstream ${this.name}: ${error.message}`);
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      await this.listTools().catch(() => undefined);
      this.options.onToolsChanged();
    });
    try {
      await client.connect(this.transport(), { timeout: this.options.timeoutMs });
    } catch (error) {
      await client.close().catch(() => undefined);
      throw error;
    }
    this.client = client;
    this.options.log(`upstream ${this.name} connected`);
    return client;
  }

  /** The connected client, connecting (again) if needed; concurrent callers share one attempt. */
  async ready(): Promise<Client> {
    if (this.client) return this.client;
    this.connecting ??= this.connect().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  capabilities(): ServerCapabilities | undefined {
    return this.client?.getServerCapabilities();
  }

  private async pages<T>(
    fetchPage: (
      client: Client,
      cursor: string | undefined,
    ) => Promise<{ items: T[]; next?: string }>,
  ): Promise<T[]> {
    const client = await this.ready();
    const all: T[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const { items, next } = await fetchPage(client, cursor);
      all.push(...items);
      if (!next) break;
      cursor = next;
    }
    return all;
  }

  private get listOptions(): RequestOptions {
    return { timeout: this.options.timeoutMs };
  }

  async listTools(): Promise<Tool[]> {
    const tools = await this.pages(async (client, cursor) => {
      const page = await client.listTools(cursor ? { cursor } : {}, this.listOptions);
      return { items: page.tools, ...(page.nextCursor && { next: page.nextCursor }) };
    });
    this.tools = new Set(tools.map((t) => t.name));
    return tools;
  }

  /** Whether the server has the tool, asking it again once if the last list did not hold it. */
  async hasTool(tool: string): Promise<boolean> {
    if (this.tools.has(tool) && this.client) return true;
    await this.listTools();
    return this.tools.has(tool);
  }

  async listResources(): Promise<Resource[]> {
    if (!(await this.supports('resources'))) return [];
    return this.pages(async (client, cursor) => {
      const page = await client.listResources(cursor ? { cursor } : {}, this.listOptions);
      return { items: page.resources, ...(page.nextCursor && { next: page.nextCursor }) };
    });
  }

  async listResourceTemplates(): Promise<ResourceTemplate[]> {
    if (!(await this.supports('resources'))) return [];
    return this.pages(async (client, cursor) => {
      const page = await client.listResourceTemplates(cursor ? { cursor } : {}, this.listOptions);
      return { items: page.resourceTemplates, ...(page.nextCursor && { next: page.nextCursor }) };
    });
  }

  async listPrompts(): Promise<Prompt[]> {
    if (!(await this.supports('prompts'))) return [];
    return this.pages(async (client, cursor) => {
      const page = await client.listPrompts(cursor ? { cursor } : {}, this.listOptions);
      return { items: page.prompts, ...(page.nextCursor && { next: page.nextCursor }) };
    });
  }

  async supports(capability: 'resources' | 'prompts' | 'tools'): Promise<boolean> {
    await this.ready();
    return this.capabilities()?.[capability] !== undefined;
  }

  async callTool(
    tool: string,
    args: Record<string, unknown>,
    options: RequestOptions,
  ): Promise<CallToolResult> {
    const client = await this.ready();
    return (await client.callTool(
      { name: tool, arguments: args },
      undefined,
      options,
    )) as CallToolResult;
  }

  async close(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    await client?.close().catch(() => undefined);
  }
}

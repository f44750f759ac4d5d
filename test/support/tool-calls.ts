import { randomUUID } from 'node:crypto';
import { hashCanonical } from '@svc/verify';
import type { ClaimInput } from '../../src/core/claim-schema.js';
import { typicalSources } from './claims.js';

// Tool-call claims (contract §12) for the ledger side of sessions, outcomes and approvals:
// built as data, as the hook adapters store them, whatever the claim schema's version.

export type ToolCallKind = 'allowed' | 'blocked' | 'escalated';

export interface ToolCallSpec {
  sessionId?: string;
  harness?: string;
  tool?: string;
  /** The tool's input exactly as the harness sent it; its JCS digest is `input_digest`. */
  input?: unknown;
  kind?: ToolCallKind;
  agent?: string;
  repository?: string;
  toolUseId?: string;
  claimId?: string;
}

/** `sha256:` + hex of SHA-256 over the JCS bytes of a tool's input (contract §12). */
export const inputDigestOf = (input: unknown): string => hashCanonical(input);

const POLICY: Record<ToolCallKind, Record<string, unknown> | undefined> = {
  allowed: undefined,
  // Three sources needed, two given: BLOCKED by min_sources.
  blocked: { minSources: 4 },
  // Human approval required and absent: ESCALATED.
  escalated: { requireHumanApproval: true },
};

/** A tool-call claim whose verdict under the default policy is `kind`. */
export function toolCallClaim(spec: ToolCallSpec = {}): ClaimInput {
  const sessionId = spec.sessionId ?? `sess-${randomUUID()}`;
  const harness = spec.harness ?? 'claude-code';
  const tool = spec.tool ?? 'Bash';
  const input = spec.input ?? { command: 'npm test' };
  const toolUseId = spec.toolUseId ?? `toolu_${randomUUID().replaceAll('-', '')}`;
  const policyConfig = POLICY[spec.kind ?? 'allowed'];
  return {
    claim_id: spec.claimId ?? `hook-${randomUUID()}`,
    entity: spec.repository ?? 'acme/web',
    claim: `Run ${tool}`,
    action: {
      action_type: 'agent_execution',
      target_system: harness,
      agent: spec.agent ?? 'coder-bot',
      ...(spec.repository === undefined ? {} : { repository: spec.repository }),
      tool: {
        harness,
        name: tool,
        input_digest: inputDigestOf(input),
        summary: { command: 'npm test', argv: ['npm', 'test'] },
      },
      session: { id: sessionId, harness, cwd: '/work/acme' },
    },
    sources: [
      {
        id: toolUseId,
        type: 'agent_trace',
        uri: `urn:${harness}:session:${sessionId}`,
        confidence: 1,
        content: `PreToolUse ${tool}`,
      },
      ...typicalSources(),
    ],
    ...(policyConfig ? { policyConfig } : {}),
  } as unknown as ClaimInput;
}

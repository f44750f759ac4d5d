import { claudeCode } from './claude-code.js';
import { codex } from './codex.js';
import { copilot } from './copilot.js';
import { cursor } from './cursor.js';
import { geminiCli } from './gemini-cli.js';
import { mcp } from './mcp.js';
import type { Harness, HarnessName } from '../types.js';
import { HARNESS_NAMES } from '../types.js';

/** Every harness, by the name its endpoint (POST /v1/hooks/<harness>) carries. */
export const HARNESSES: Readonly<Record<HarnessName, Harness>> = {
  'claude-code': claudeCode,
  codex,
  cursor,
  'gemini-cli': geminiCli,
  copilot,
  mcp,
};

export function isHarnessName(name: string): name is HarnessName {
  return (HARNESS_NAMES as readonly string[]).includes(name);
}

/** The harness of that name; a name that is none is a misuse. */
export function harnessOf(name: string): Harness {
  if (!isHarnessName(name)) {
    throw new TypeError(`unknown harness "${name}" (known: ${HARNESS_NAMES.join(', ')})`);
  }
  return HARNESSES[name];
}

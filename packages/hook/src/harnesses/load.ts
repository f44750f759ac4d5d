import type { Harness, HarnessName } from '../types.js';

// svc-hook starts once per tool call and needs one harness: it loads only that one's module.
const LOADERS: Readonly<Record<HarnessName, () => Promise<Harness>>> = {
  'claude-code': () => import('./claude-code.js').then((m) => m.claudeCode),
  codex: () => import('./codex.js').then((m) => m.codex),
  cursor: () => import('./cursor.js').then((m) => m.cursor),
  'gemini-cli': () => import('./gemini-cli.js').then((m) => m.geminiCli),
  copilot: () => import('./copilot.js').then((m) => m.copilot),
  mcp: () => import('./mcp.js').then((m) => m.mcp),
};

/** The harness of that (known) name, loaded on its own. */
export function loadHarness(name: HarnessName): Promise<Harness> {
  return LOADERS[name]();
}

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The shell blocks of the documentation, as the documented-commands test runs them.
 *
 * - README.md, packages/verify/README.md and action/README.md are runnable, in that order; a
 *   guide in docs/ is runnable when it holds the line `<!-- runnable-guide -->`.
 * - In a runnable document every ```bash and ```sh block runs, unless the line before its fence
 *   is `<!-- not-runnable: <reason> -->` (Docker, GitHub, a registry, the service's own start).
 * - Blocks run in order in one bash session, in a fresh clone of the repository, with the
 *   service listening; `localhost:3000` in a block is the service's address.
 */
export const RUNNABLE_DOCUMENTS = ['README.md', 'packages/verify/README.md', 'action/README.md'];
export const GUIDE_MARKER = '<!-- runnable-guide -->';
const NOT_RUNNABLE = /^<!-- not-runnable: (.*\S.*) -->$/;

export interface ShellBlock {
  file: string;
  /** Line of the opening fence, 1-based. */
  line: number;
  code: string;
  /** Why the block is not run; null for a block that runs. */
  notRunnable: string | null;
}

/** The runnable documents of the repository at `root`: the three READMEs, then marked guides. */
export function runnableDocuments(root: string): string[] {
  const guides = readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`)
    .filter((path) => readFileSync(join(root, path), 'utf8').split('\n').includes(GUIDE_MARKER));
  return [...RUNNABLE_DOCUMENTS, ...guides];
}

/** Every ```bash / ```sh block of one Markdown text, with its marker. */
export function shellBlocks(file: string, markdown: string): ShellBlock[] {
  const lines = markdown.split('\n');
  const blocks: ShellBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,})(\S*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const [, indent, fence, info] = open;
    let end = i + 1;
    while (end < lines.length && lines[end]!.trim() !== fence) end++;
    if (info === 'bash' || info === 'sh') {
      let before = i - 1;
      while (before >= 0 && lines[before]!.trim() === '') before--;
      const marker = before >= 0 ? NOT_RUNNABLE.exec(lines[before]!.trim()) : null;
      blocks.push({
        file,
        line: i + 1,
        code: lines
          .slice(i + 1, end)
          .map((l) => (l.startsWith(indent!) ? l.slice(indent!.length) : l))
          .join('\n'),
        notRunnable: marker ? marker[1]!.trim() : null,
      });
    }
    i = end;
  }
  return blocks;
}

import { readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { isRepository } from '../protocol.js';

/**
 * The repository a session works in, from the `origin` remote of the git repository at `cwd`:
 * `git@github.com:acme/web.git`, `https://github.com/acme/web` and `ssh://git@host/acme/web.git`
 * all name `acme/web`. Read from the repository's config file rather than by running git: this
 * runs before every tool call, where a process start would cost more than the decision. Null
 * when there is no repository, no origin, or an origin that is a local path.
 */
export function originRepository(cwd: string | undefined): string | null {
  try {
    const gitDir = gitDirOf(resolve(cwd ?? '.'));
    if (!gitDir) return null;
    const url = originUrl(readFileSync(join(commonDirOf(gitDir), 'config'), 'utf8'));
    return url === null ? null : repositoryOfUrl(url);
  } catch {
    return null;
  }
}

/** The `.git` directory of the working tree holding `dir`, following a worktree's link. */
function gitDirOf(dir: string): string | null {
  for (let at = dir; ; at = dirname(at)) {
    const candidate = join(at, '.git');
    const stat = statSync(candidate, { throwIfNoEntry: false });
    if (stat?.isDirectory()) return candidate;
    if (stat?.isFile()) {
      // A worktree or a submodule: ".git" is a file saying where its git directory is.
      const link = /^gitdir:\s*(.+?)\s*$/m.exec(readFileSync(candidate, 'utf8'))?.[1];
      return link ? resolve(at, link) : null;
    }
    if (dirname(at) === at) return null;
  }
}

/** A worktree's git directory keeps its config in the common directory it names. */
function commonDirOf(gitDir: string): string {
  const common = statSync(join(gitDir, 'commondir'), { throwIfNoEntry: false });
  if (!common?.isFile()) return gitDir;
  const path = readFileSync(join(gitDir, 'commondir'), 'utf8').trim();
  return isAbsolute(path) ? path : resolve(gitDir, path);
}

/** `url` in the `[remote "origin"]` section of a git config file. */
export function originUrl(config: string): string | null {
  let inOrigin = false;
  for (const line of config.split(/\r?\n/)) {
    const section = /^\s*\[([^\]]*)\]/.exec(line)?.[1];
    if (section !== undefined) {
      inOrigin = /^remote\s+"origin"$/i.test(section.trim());
      continue;
    }
    const url = inOrigin ? /^\s*url\s*=\s*"?([^"\s]+)"?\s*$/i.exec(line)?.[1] : undefined;
    if (url) return url;
  }
  return null;
}

/** The repository path of a remote URL (scp-like or with a scheme), or null for a local one. */
export function repositoryOfUrl(url: string): string | null {
  let path: string;
  const scp = /^(?:[^@/\s]+@)?[^:/\s]+:(?!\/)(.+)$/.exec(url);
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) {
    if (/^file:/i.test(url)) return null;
    path = new URL(url).pathname;
  } else if (scp) path = scp[1]!;
  else return null;
  const repository = path.replace(/^\/+|\/+$/g, '').replace(/\.git$/, '');
  return isRepository(repository) ? repository : null;
}

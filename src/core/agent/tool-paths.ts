// Paths of tool calls in the one spelling rules match (tool-call-schema.ts, toolPathProblem):
// relative to the session's project directory when inside it, else absolute; `~` kept as the
// home marker, since the service does not know the agent's home directory. Pure string work:
// nothing is looked up on a disk, so symbolic links are not followed (docs/POLICIES.md).

const DRIVE = /^[A-Za-z]:\//;

/** Backslashes of a Windows path as `/`; `file://` URIs as their path. */
function slashed(path: string, windows: boolean): string {
  let p = path;
  if (/^file:\/\//i.test(p)) {
    p = p.replace(/^file:\/\/(?:localhost)?/i, '');
    try {
      p = decodeURIComponent(p);
    } catch {
      // A malformed escape stays as written.
    }
    if (/^\/[A-Za-z]:\//.test(p)) p = p.slice(1);
  }
  if (windows || /^[A-Za-z]:\\/.test(p)) p = p.replace(/\\/g, '/');
  return p;
}

/** `root` and its segments with `.`, `..` and empty ones resolved; `..` past a root stops there. */
function resolveSegments(root: string, segments: readonly string[]): string {
  const out: string[] = [];
  let leadingUp = 0;
  for (const segment of segments) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      if (out.length > 0) out.pop();
      else if (!root) leadingUp++;
      continue;
    }
    out.push(segment);
  }
  const body = [...Array<string>(leadingUp).fill('..'), ...out].join('/');
  if (root) return root + body;
  return body === '' ? '.' : body;
}

/** A path with its root (`/`, `C:/`, `~`, `~user`) split off; root '' for a relative path. */
function split(path: string): { root: string; rest: string } {
  const drive = DRIVE.exec(path);
  if (drive) return { root: drive[0], rest: path.slice(drive[0].length) };
  if (path.startsWith('/')) return { root: '/', rest: path.slice(1) };
  const home = /^~[^/]*/.exec(path);
  if (home) return { root: `${home[0]}/`, rest: path.slice(home[0].length) };
  return { root: '', rest: path };
}

function absolute(path: string, cwd: string | undefined): string {
  const { root, rest } = split(path);
  if (root) {
    // `~/..` leaves the unknown home directory: what is left is taken from the root.
    if (root.startsWith('~')) {
      const resolved = resolveSegments('', rest.split('/'));
      if (resolved === '.') return root === '~/' ? '~' : root.slice(0, -1);
      if (resolved.startsWith('..')) return resolveSegments('/', resolved.split('/'));
      return root + resolved;
    }
    return resolveSegments(root, rest.split('/'));
  }
  if (!cwd) return resolveSegments('', rest.split('/'));
  const base = split(cwd);
  return resolveSegments(base.root, [...base.rest.split('/'), ...rest.split('/')]);
}

/**
 * A tool call's path as a summary stores it, or null for one that cannot be a path (empty,
 * or holding a NUL). `cwd` is the session's project directory (absolute) when known.
 */
export function normalizeToolPath(raw: string, cwd: string | undefined): string | null {
  if (raw === '' || raw.includes('\0')) return null;
  const windows = cwd !== undefined && DRIVE.test(slashed(cwd, true));
  const base = cwd === undefined ? undefined : absolute(slashed(cwd, windows), undefined);
  const path = absolute(slashed(raw, windows), base);
  if (base && split(base).root && !base.startsWith('~')) {
    if (path === base) return '.';
    const prefix = base.endsWith('/') ? base : `${base}/`;
    if (path.startsWith(prefix)) return path.slice(prefix.length);
  }
  return path;
}

/** Whether a directory a harness reports is absolute (`/x`, `\x`, `C:\x`, `C:/x`). */
export const isAbsoluteDir = (raw: string): boolean => /^(?:[A-Za-z]:)?[\\/]/.test(raw);

/**
 * `raw` as seen from the directory `dir` a call runs in: a relative path joined to it, one
 * with a root (`/`, `~`, a drive) as it is. Backslashes are the caller's to turn first.
 */
export function underDir(dir: string | undefined, raw: string): string {
  if (dir === undefined || raw === '' || split(raw).root) return raw;
  return `${dir.replace(/\/+$/, '')}/${raw}`;
}

/**
 * Whether a path lies outside the project directory `cwd`: anything under `~`, an absolute
 * path not under `cwd`, a relative one that climbs out of it. `strict` counts the project
 * directory itself (and its parents) as outside too, for "delete this" (`rm -r .`).
 * Without a `cwd`, every absolute path is outside.
 */
export function pathOutside(path: string, cwd: string | undefined, strict: boolean): boolean {
  if (path === '') return false;
  const normalized = normalizeToolPath(path, cwd);
  if (normalized === null) return false;
  if (normalized === '.') return strict;
  const { root } = split(normalized);
  if (root) return true;
  return normalized === '..' || normalized.startsWith('../');
}

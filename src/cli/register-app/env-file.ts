import { randomBytes } from 'node:crypto';
import { linkSync, readFileSync, realpathSync, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { writeNewPrivateFile } from '../../secrets/secret-files.js';
import { RegistrationError } from './errors.js';
import type { AppConversion } from './manifest-conversion.js';

/** Env-file keys that belong to one App registration. */
export const APP_SETTING_KEYS = [
  'APP_ID',
  'PRIVATE_KEY',
  'PRIVATE_KEY_PATH',
  'WEBHOOK_SECRET',
  'GITHUB_CLIENT_ID',
  'GITHUB_CLIENT_SECRET',
] as const;

/**
 * The env-file lines of a created App. The PEM becomes one double-quoted line with its newlines
 * written as `\n`, the form Probot's setup writes and its private-key loader reads back.
 */
export function credentialsEnv(app: AppConversion): Record<string, string> {
  const values: Record<string, string> = {
    APP_ID: String(app.id),
    PRIVATE_KEY: `"${app.pem.replace(/\r?\n/g, '\\n')}"`,
  };
  if (app.webhook_secret !== null) values.WEBHOOK_SECRET = app.webhook_secret;
  values.GITHUB_CLIENT_ID = app.client_id;
  values.GITHUB_CLIENT_SECRET = app.client_secret;
  return values;
}

/** The env file already holds another App's settings and --force was not given. */
export class EnvConflictError extends RegistrationError {
  constructor(
    readonly path: string,
    readonly keys: string[],
  ) {
    super(
      `${path} already has App settings (${keys.join(', ')}); pass --force to replace them, or --out <other file>`,
    );
  }
}

interface EnvEntry {
  key: string | null;
  value: string;
  lines: string[];
}

const ASSIGNMENT = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s?(.*)$/;

// Splits an env file into entries, keeping a quoted value that spans lines (a PEM pasted with
// real newlines) in one entry, so replacing it cannot leave half a key behind.
function splitEnv(text: string): EnvEntry[] {
  const lines = text.split(/\r?\n/);
  if (lines.at(-1) === '') lines.pop();
  const entries: EnvEntry[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const match = ASSIGNMENT.exec(line);
    if (!match) {
      entries.push({ key: null, value: '', lines: [line] });
      continue;
    }
    const value = match[2]!.trim();
    const entry: EnvEntry = { key: match[1]!, value, lines: [line] };
    const quote = value[0];
    if ((quote === '"' || quote === "'") && value.indexOf(quote, 1) === -1) {
      while (i + 1 < lines.length) {
        const next = lines[++i]!;
        entry.lines.push(next);
        entry.value += `\n${next}`;
        if (next.includes(quote)) break;
      }
    }
    entries.push(entry);
  }
  return entries;
}

const isEmptyValue = (value: string) => value === '' || value === '""' || value === "''";

export interface EnvMerge {
  content: string;
  /** Keys whose earlier value was replaced. */
  replaced: string[];
  /** App settings dropped because the new App does not use them (PRIVATE_KEY_PATH). */
  removed: string[];
}

/**
 * Merges new settings into the text of an env file (null: no file yet). Unrelated lines and
 * comments stay as they are; existing App settings are replaced only with `force`, else an
 * EnvConflictError names them. Pure: the caller reads and writes the file.
 */
export function mergeEnvFile(
  existing: string | null,
  values: Record<string, string>,
  options: { force: boolean; path?: string },
): EnvMerge {
  const entries = existing === null ? [] : splitEnv(existing);
  const appKeys = new Set<string>(APP_SETTING_KEYS);
  const conflicts = [
    ...new Set(
      entries
        .filter((e) => e.key !== null && appKeys.has(e.key) && !isEmptyValue(e.value))
        .map((e) => e.key!),
    ),
  ];
  if (conflicts.length > 0 && !options.force) {
    throw new EnvConflictError(options.path ?? 'the env file', conflicts);
  }
  const out: string[] = [];
  const written = new Set<string>();
  const replaced = new Set<string>();
  const removed = new Set<string>();
  for (const entry of entries) {
    const key = entry.key;
    if (key !== null && key in values) {
      if (!isEmptyValue(entry.value)) replaced.add(key);
      // A key listed twice would let the later, stale line win in some loaders: write it once.
      if (!written.has(key)) out.push(`${key}=${values[key]}`);
      written.add(key);
    } else if (key !== null && appKeys.has(key)) {
      // PRIVATE_KEY_PATH of the previous App would point at the wrong key.
      if (!isEmptyValue(entry.value)) removed.add(key);
    } else {
      out.push(...entry.lines);
    }
  }
  for (const [key, value] of Object.entries(values)) {
    if (!written.has(key)) out.push(`${key}=${value}`);
  }
  return { content: `${out.join('\n')}\n`, replaced: [...replaced], removed: [...removed] };
}

/** A file's text, or null when there is none; RegistrationError when it cannot be read. */
export function readOptional(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new RegistrationError(`cannot read ${path}: ${(error as Error).message}`);
  }
}

/**
 * Writes an env file whole. It holds a private key: owner-only (0600) from the first byte.
 * The content goes to a temporary file beside it, flushed, then takes the file's place in one
 * step (a rename over an existing file, a link for a new one, which fails if a file appeared
 * meanwhile), so a crash or a reader sees the old file or the new one, never a part. A
 * symlinked env file is replaced where it points.
 */
export function writeEnvFile(path: string, content: string, existed: boolean): void {
  let target = path;
  if (existed) {
    try {
      target = realpathSync(path);
    } catch {
      // Gone meanwhile: renamed into place as it was named.
    }
  }
  const tmp = join(dirname(target), `.${basename(target)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    writeNewPrivateFile(tmp, content);
    if (existed) renameSync(tmp, target);
    else linkSync(tmp, target);
  } catch (error) {
    throw new RegistrationError(`cannot write ${path}: ${(error as Error).message}`);
  } finally {
    rmSync(tmp, { force: true });
  }
}

/**
 * Puts `values` into the env file at `path` (`mergeEnvFile`: other lines kept, another App's
 * settings replaced only with `force`) and writes it atomically (`writeEnvFile`).
 */
export function updateEnvFile(
  path: string,
  values: Record<string, string>,
  options: { force: boolean },
): EnvMerge {
  const existing = readOptional(path);
  const merged = mergeEnvFile(existing, values, { force: options.force, path });
  writeEnvFile(path, merged.content, existing !== null);
  return merged;
}

import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { RegistrationError } from './errors.js';

// GitHub's limit for an App's name.
export const MAX_APP_NAME = 34;

const access = z.enum(['read', 'write', 'admin']);
/** An App permission's access level, lowest first. */
export type Access = z.infer<typeof access>;
const ACCESS_ORDER: readonly Access[] = access.options;

/**
 * What app.yml must hold to be registrable. Other manifest members (setup_url, callback_urls …)
 * pass through untouched: GitHub validates them, and we should not silently drop them.
 */
const manifestFileSchema = z.looseObject({
  name: z.string().min(1).max(MAX_APP_NAME),
  url: z.url({ protocol: /^https?$/ }),
  description: z.string().optional(),
  public: z.boolean().optional(),
  hook_attributes: z.looseObject({ active: z.boolean().optional() }).optional(),
  default_permissions: z.record(z.string(), access),
  default_events: z.array(z.string().min(1)),
});

export type AppManifest = z.infer<typeof manifestFileSchema> & {
  hook_attributes: { url: string; active?: boolean };
  redirect_url: string;
  public: boolean;
};

export interface ManifestOptions {
  /** Where GitHub delivers webhooks: the service's /v1/webhook/scm or a proxy channel. */
  webhookUrl: string;
  /** Where GitHub sends the browser back with ?code=… (the local server). */
  redirectUrl: string;
  /** Overrides app.yml's name. */
  name?: string;
  /**
   * Permissions an option of the command needs besides app.yml's (e.g. `members: read`). Each
   * raises its permission to at least that access; none lowers what app.yml grants.
   */
  extraPermissions?: Readonly<Record<string, Access>>;
}

/** app.yml's permissions with the extra ones, each at the higher of the two accesses. */
function withExtraPermissions(
  permissions: Record<string, Access>,
  extra: Readonly<Record<string, Access>>,
): Record<string, Access> {
  const merged = { ...permissions };
  for (const [name, level] of Object.entries(extra)) {
    const current = merged[name];
    if (current === undefined || ACCESS_ORDER.indexOf(level) > ACCESS_ORDER.indexOf(current))
      merged[name] = level;
  }
  return merged;
}

/**
 * Builds the manifest GitHub receives from the text of app.yml. Pure: the same text and options
 * give the same manifest. Throws RegistrationError for a file that is not a usable manifest.
 */
export function buildManifest(appYml: string, options: ManifestOptions): AppManifest {
  let parsed: unknown;
  try {
    parsed = parseYaml(appYml);
  } catch (error) {
    throw new RegistrationError(`the manifest is not valid YAML: ${(error as Error).message}`);
  }
  const file = manifestFileSchema.safeParse(parsed);
  if (!file.success) {
    const detail = file.error.issues
      .map((i) => `${i.path.join('.') || '(file)'}: ${i.message}`)
      .join('; ');
    throw new RegistrationError(`the manifest is not a GitHub App manifest: ${detail}`);
  }
  return {
    ...file.data,
    name: options.name ?? file.data.name,
    default_permissions: withExtraPermissions(
      file.data.default_permissions,
      options.extraPermissions ?? {},
    ),
    hook_attributes: { ...file.data.hook_attributes, url: options.webhookUrl },
    redirect_url: options.redirectUrl,
    // An App is private unless app.yml says otherwise: svc Apps are per operator.
    public: file.data.public ?? false,
  };
}

import type { ConditionalRule } from '../rules/conditional-schema.js';

// The rules of the built-in `agent` policy (policies.ts) for coding agents' tool calls
// (contract §12). Each is written as validation leaves it (defaults filled in), so the
// policy's config hashes as it is written; docs/POLICIES.md lists each with its reason.

/** Branches a force push or a deletion must never reach. */
const PROTECTED = '{main,master,release*}';
/** A refspec whose destination is a protected branch: `main`, `HEAD:main`, `refs/heads/main`. */
const PROTECTED_REF = `{,*:}{,refs/heads/}${PROTECTED}`;
/** The options that make a push a force push. */
const FORCE = '{-f,--for*,--mirror}';
const RECURSIVE = '{-r,-R,--recursive}';
/** The repository's own history. */
const GIT_DIR = '{.git,.git/,./.git,./.git/,*/.git,*/.git/}';
const OPEN_MODE = '{777,0777,a+rwx,a=rwx,ugo+rwx,ugo=rwx}';

/** Hosts a call may reach without asking: source hosting, package registries, this machine. */
export const AGENT_NETWORK_ALLOWLIST = [
  'github.com',
  '*.github.com',
  '*.githubusercontent.com',
  'registry.npmjs.org',
  'registry.yarnpkg.com',
  'pypi.org',
  'files.pythonhosted.org',
  'crates.io',
  'static.crates.io',
  'index.crates.io',
  'proxy.golang.org',
  'sum.golang.org',
  'rubygems.org',
  'repo.maven.apache.org',
  'localhost',
  '127.0.0.1',
  '::1',
];

/** Files that hold credentials. */
export const AGENT_SECRET_PATHS = [
  '**/.env*',
  '**/*.env',
  '!**/.env.example',
  '!**/.env.sample',
  '!**/.env.template',
  '!**/.env.dist',
  '**/.ssh/**',
  '**/.aws/credentials',
  '**/.config/gcloud/**',
  '**/.azure/**',
  '**/.netrc',
  '**/.git-credentials',
  '**/.docker/config.json',
  '**/*.pem',
  '**/*.key',
  '**/id_rsa*',
  '**/id_dsa*',
  '**/id_ecdsa*',
  '**/id_ed25519*',
];

/**
 * Programs that print a file, copy it elsewhere or send it: named with a credential file, the
 * command reads it (rule:read-secrets-in-commands). `source .env` is not among them: a shell
 * loading its environment shows the agent nothing.
 */
const SECRET_READERS = [
  ...['cat', 'tac', 'less', 'more', 'most', 'head', 'tail', 'bat', 'batcat', 'nl', 'strings'],
  ...['base64', 'base32', 'xxd', 'od', 'hexdump', 'grep', 'egrep', 'fgrep', 'rg', 'ag', 'awk'],
  ...['gawk', 'sed', 'cut', 'sort', 'uniq', 'jq', 'yq', 'diff', 'vim', 'vi', 'nano', 'emacs'],
  ...['scp', 'rsync', 'nc', 'ncat', 'socat', 'curl', 'wget', 'gpg', 'openssl', 'pbcopy'],
  'xclip',
].join(',');

/**
 * Credential files as one word of a command: those of AGENT_SECRET_PATHS, with the `.env`
 * files spelled out, since a command pattern word has no exclusions to keep `.env.example`
 * and the other templates out of `.env.*`. A pattern word's `*` matches `/` and `~` too, so
 * `*\/.env` is `./.env`, `~/.env` and `/a/b/.env`.
 */
const SECRET_FILES = `{,*/}{${[
  ...['.env', '.env.local', '.env.*.local', '.env.production', '.env.prod', '.env.development'],
  ...['.env.dev', '.env.staging', '.env.test', '.envrc', '.netrc', '.git-credentials'],
  ...['*.pem', '*.key', 'id_rsa', 'id_dsa', 'id_ecdsa', 'id_ed25519', '.docker/config.json'],
  ...['.ssh', '.ssh/*', '.aws', '.aws/credentials', '.config/gcloud', '.config/gcloud/*'],
  ...['.azure', '.azure/*'],
].join(',')}}`;

/** A credential file sent as a request body: curl's `-d @.env`, `-F f=@id_rsa`, … */
const SECRET_UPLOADS = `{,*=}@{*.env,*.pem,*.key,*id_rsa,*id_ed25519,*/.ssh/*}`;

/**
 * Tools that only read, by their exact names in the harnesses (Claude Code, Gemini CLI,
 * Cursor, Copilot, Codex); any other tool, an MCP tool included, may write. Exact names, no
 * wildcards: `*search*` would also pass an MCP tool named `search_and_replace`.
 */
const READ_ONLY_TOOLS = [
  'Read',
  'Glob',
  'Grep',
  'LS',
  'NotebookRead',
  'WebFetch',
  'WebSearch',
  'read_file',
  'read_many_files',
  'list_directory',
  'search_file_content',
  'google_web_search',
  'web_fetch',
  'list_dir',
  'file_search',
  'codebase_search',
  'grep_search',
  'web_search',
  'view',
].map((name) => `!${name}`);

const rule = (
  name: string,
  description: string,
  on_fail: 'block' | 'escalate',
  conditions: ConditionalRule['if'],
): ConditionalRule => ({ name, description, if: conditions, require: { never: true }, on_fail });

export const AGENT_POLICY_RULES: readonly ConditionalRule[] = [
  rule(
    'recursive-delete-outside-project',
    'A recursive delete outside the project directory, of the project directory itself, of its .git, of / or of ~ destroys what version control cannot bring back.',
    'block',
    {
      command: [
        `rm ** ${RECURSIVE} ** <outside>`,
        `rm ** <outside> ** ${RECURSIVE}`,
        `rm ** ${RECURSIVE} ** <project>`,
        `rm ** <project> ** ${RECURSIVE}`,
        `rm ** ${RECURSIVE} ** ${GIT_DIR}`,
        `rm ** ${GIT_DIR} ** ${RECURSIVE}`,
        'find ** <outside> ** -delete',
        'find ** <outside> ** {-exec,-execdir,-ok,-okdir} {rm,unlink,shred}',
      ],
    },
  ),
  rule(
    'force-push-protected',
    'A force push to main, master or a release branch rewrites history others build on.',
    'block',
    {
      command: [
        `git ** push ** ${FORCE} ** ${PROTECTED_REF}`,
        `git ** push ** ${PROTECTED_REF} ** ${FORCE}`,
        `git ** push ** +${PROTECTED_REF}`,
      ],
    },
  ),
  rule(
    'force-push-from-protected',
    'A force push while main, master or a release branch is checked out may rewrite that branch (git push -f origin HEAD).',
    'block',
    { branch: ['main', 'master', 'release*'], command: [`git ** push ** {-f,--for*,--mirror,+*}`] },
  ),
  rule(
    'delete-protected-branch',
    'Deleting main, master or a release branch on a remote removes history others build on.',
    'block',
    {
      command: [
        `git ** push ** {-d,--delete} ** ${PROTECTED_REF}`,
        `git ** push ** ${PROTECTED_REF} ** {-d,--delete}`,
        `git ** push ** :{,refs/heads/}${PROTECTED}`,
      ],
    },
  ),
  rule(
    'history-rewrite',
    'filter-branch and filter-repo rewrite every commit of a repository.',
    'block',
    { command: ['git ** {filter-branch,filter-repo}', 'git-filter-repo', 'bfg'] },
  ),
  rule(
    'reset-hard-protected',
    'git reset --hard on main, master or a release branch discards commits and work on the branch others build on.',
    'block',
    { branch: ['main', 'master', 'release*'], command: ['git ** reset ** --hard'] },
  ),
  rule(
    'disk-and-permissions',
    'Formatting or overwriting a disk, and opening or taking over permissions recursively outside the project, cannot be undone.',
    'block',
    {
      command: [
        '{mkfs,mkfs.*,mke2fs,mkswap,wipefs,fdisk,sfdisk,cfdisk,parted}',
        'diskutil ** {erase*,partition*,zeroDisk,randomDisk,secureErase}',
        'dd ** of=/dev/*',
        `chmod ** ${RECURSIVE} ** ${OPEN_MODE}`,
        `chmod ** ${OPEN_MODE} ** ${RECURSIVE}`,
        `{chmod,chown,chgrp} ** ${RECURSIVE} ** <outside>`,
        `{chmod,chown,chgrp} ** <outside> ** ${RECURSIVE}`,
      ],
    },
  ),
  rule(
    'read-secrets',
    'Credential files (.env, SSH keys, cloud credentials, private keys) are not for an agent to read or change; templates such as .env.example are.',
    'block',
    { tool_paths: AGENT_SECRET_PATHS },
  ),
  rule(
    'read-secrets-in-commands',
    'A command that prints, copies out or sends a credential file reads it as surely as a file tool does (cat .env, grep KEY .env, nc host < .env, scp ~/.ssh/id_rsa); templates such as .env.example stay readable.',
    'block',
    {
      command: [
        `{${SECRET_READERS}} ** ${SECRET_FILES}`,
        `< ${SECRET_FILES}`,
        `{curl,wget,http,https,xh} ** ${SECRET_UPLOADS}`,
      ],
    },
  ),
  rule(
    'secrets-in-commands',
    'A command that names a credential file may print or send it; a person decides, since it may also only write one (cp .env.example .env).',
    'escalate',
    {
      command: [
        '* ** {.env,.env.*,*/.env,*/.env.*,.envrc,*/.envrc,.netrc,*/.netrc,.git-credentials,*/.git-credentials}',
        '* ** {*.pem,*.key,id_rsa*,*/id_rsa*,id_ed25519*,*/id_ed25519*,id_ecdsa*,*/id_ecdsa*}',
        '* ** {~/.ssh,~/.ssh/*,*/.ssh/*,.ssh/*,~/.aws/credentials,*/.aws/credentials,~/.config/gcloud,*/.config/gcloud/*,~/.azure,*/.azure/*}',
      ],
    },
  ),
  rule(
    'force-push',
    'Any other force push rewrites a remote branch: a person confirms it (git push --force, -f, +branch).',
    'escalate',
    { command: [`git ** push ** {-f,--for*,--mirror,+*}`] },
  ),
  rule(
    'reset-hard',
    'git reset --hard discards uncommitted work; on a branch the claim does not name, a person confirms.',
    'escalate',
    { command: ['git ** reset ** --hard'] },
  ),
  rule(
    'write-outside-project',
    'A tool that may write, acting on a path outside the project directory, reaches beyond what the session was started for.',
    'escalate',
    { tool: READ_ONLY_TOOLS, outside_project: true },
  ),
  rule(
    'shell-write-outside-project',
    'A command that writes, copies, moves or links a file outside the project directory (a redirection to ~/.bashrc, tee or cp into /etc) reaches beyond what the session was started for.',
    'escalate',
    {
      command: [
        '{>,>>,>|,&>,&>>,<>,>&} <outside>',
        'tee ** <outside>',
        '{cp,mv,install,ln,rsync,touch,mkdir,truncate,chmod,chown,chgrp} ** <outside>',
        'sed ** {-i,-[a-zA-Z]*i*,--in-place*} ** <outside>',
        'sed ** <outside> ** {-i,-[a-zA-Z]*i*,--in-place*}',
        'dd ** of={/*,~*,..,../*}',
      ],
    },
  ),
  rule(
    'network-allowlist',
    'A call to a host other than source hosting and the package registries may send code or secrets away.',
    'escalate',
    { urls: AGENT_NETWORK_ALLOWLIST.map((host) => `!${host}`) },
  ),
  rule(
    'package-publish',
    'Publishing a package or an image releases code to others; a person confirms.',
    'escalate',
    {
      command: [
        '{npm,pnpm,bun,yarn} ** publish',
        'twine upload',
        'cargo publish',
        '{docker,podman,buildah,nerdctl} ** push',
        'gem push',
        '{poetry,uv,flit,hatch,pdm} publish',
        'gh release create',
        '{mvn,mvnw} ** deploy',
        '{gradle,gradlew} ** publish*',
        '{dotnet,nuget} ** push',
        'helm push',
        '{vsce,ovsx} publish',
      ],
    },
  ),
];

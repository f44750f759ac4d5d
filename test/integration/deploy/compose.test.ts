import { execFileSync } from 'node:child_process';
import { createPrivateKey } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { parse } from 'yaml';
import { loadConfig } from '../../../src/config/config.js';
import { loadKeyEncryptionSecret } from '../../../src/secrets/key-encryption.js';

// No Docker engine runs on the development machines: the compose file is checked as data.
const root = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const composeText = readFileSync(join(root, 'docker/compose.yml'), 'utf8');
const compose = parse(composeText) as {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
  secrets?: Record<string, { file?: string }>;
};
const dockerfile = readFileSync(join(root, 'docker/Dockerfile'), 'utf8');

interface Service {
  image?: string;
  build?: { context: string; dockerfile: string };
  entrypoint?: string[];
  command?: string[];
  environment?: Record<string, string>;
  env_file?: string[];
  secrets?: string[];
  volumes?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[]; interval?: string; retries?: number };
}

const { mongo, svc } = compose.services as { mongo: Service; svc: Service };

// init-secrets.sh run for real, in a copy of docker/ (it writes beside itself).
let generated: string;
beforeAll(() => {
  generated = mkdtempSync(join(tmpdir(), 'svc-docker-'));
  copyFileSync(join(root, 'docker/init-secrets.sh'), join(generated, 'init-secrets.sh'));
  execFileSync('sh', [join(generated, 'init-secrets.sh')], { stdio: 'pipe' });
});
afterAll(() => rmSync(generated, { recursive: true, force: true }));

const snapshot = () =>
  Object.fromEntries(
    ['svc.env', ...readdirSync(join(generated, 'secrets')).map((f) => `secrets/${f}`)].map((f) => [
      f,
      readFileSync(join(generated, f), 'utf8'),
    ]),
  );

/**
 * A value as compose resolves it when only the variables in `set` are set: `${NAME:-default}`
 * gives the default, `${NAME:?message}` the set value (compose stops with the message
 * without one).
 */
const interpolate = (value: string, set: Record<string, string> = {}) =>
  value
    .replace(
      /\$\{([A-Z_]+):-([^}]*)\}/g,
      (_m, name: string, fallback: string) => set[name] ?? fallback,
    )
    .replace(/\$\{([A-Z_]+):\?([^}]*)\}/g, (_m, name: string, message: string) => {
      if (set[name] === undefined) throw new Error(message);
      return set[name]!;
    });

/** KEY=value lines of an env file, as compose reads them (no quotes used). */
const envFile = (text: string) =>
  Object.fromEntries(
    text
      .split('\n')
      .filter((line) => /^[A-Z_]+=/.test(line))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );

const healthCommand = (service: Service) => service.healthcheck!.test.slice(1).join(' ');

describe('docker/compose.yml', () => {
  it('has svc and MongoDB, each with a healthcheck and a restart policy', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['mongo', 'svc']);
    for (const service of [mongo, svc]) {
      expect(service.healthcheck?.test[0]).toBe('CMD');
      expect(service).toHaveProperty('restart', 'unless-stopped');
    }
    expect(mongo.image).toMatch(/^mongo:(7|8)/);
    expect(svc.build).toEqual({ context: '..', dockerfile: 'docker/Dockerfile' });
  });

  it('runs MongoDB as a single-node replica set that its healthcheck initiates', () => {
    const replSet = mongo.command![mongo.command!.indexOf('--replSet') + 1];
    expect(replSet).toBe('rs0');
    const check = healthCommand(mongo);
    expect(check).toContain('mongosh');
    expect(check).toMatch(
      /rs\.initiate\(\{ _id: 'rs0', members: \[\{ _id: 0, host: 'mongo:27017' \}\] \}\)/,
    );
    // Healthy only once the node is primary, so svc never starts against a secondary.
    expect(check).toContain('isWritablePrimary');
  });

  it('keeps MongoDB data on named volumes', () => {
    expect(mongo.volumes).toEqual(
      expect.arrayContaining(['mongo-data:/data/db', 'mongo-config:/data/configdb']),
    );
    expect(Object.keys(compose.volumes ?? {})).toEqual(
      expect.arrayContaining(['mongo-data', 'mongo-config']),
    );
  });

  it('starts svc only once MongoDB is healthy, and checks svc deeply', () => {
    expect(svc.depends_on).toEqual({ mongo: { condition: 'service_healthy' } });
    expect(healthCommand(svc)).toContain('/health?deep=true');
  });

  it('points svc at the replica set as its own user, from the env file, with the proxy trust set', () => {
    const env = svc.environment!;
    // The URI holds a password: never inline.
    expect(env).not.toHaveProperty('MONGODB_URI');
    const example = envFile(readFileSync(join(root, 'docker/svc.env.example'), 'utf8'));
    const uri = new URL(example.MONGODB_URI!.replace(/^mongodb:/, 'http:'));
    expect(uri.host).toBe('mongo:27017');
    expect(uri.username).toBe('svc');
    expect(uri.searchParams.get('replicaSet')).toBe('rs0');
    expect(uri.searchParams.get('authSource')).toBe('admin');
    expect(env).toHaveProperty('SVC_TRUST_PROXY');
  });

  it('has no default for SVC_BASE_URL: compose stops, saying what to set', () => {
    const value = svc.environment!.SVC_BASE_URL!;
    expect(value).toMatch(/^\$\{SVC_BASE_URL:\?.*public URL.*\}$/);
    expect(() => interpolate(value)).toThrow(/set SVC_BASE_URL/);
    expect(interpolate(value, { SVC_BASE_URL: 'https://svc.example.com' })).toBe(
      'https://svc.example.com',
    );
  });

  it('runs MongoDB with authentication: a root user from a secret and the replica set keyfile', () => {
    const env = mongo.environment!;
    expect(env.MONGO_INITDB_ROOT_USERNAME).toBe('root');
    expect(env).not.toHaveProperty('MONGO_INITDB_ROOT_PASSWORD');
    const secretPath = (name: string) => {
      expect(mongo.secrets).toContain(name);
      expect(compose.secrets?.[name]?.file).toMatch(/^\.\/secrets\//);
      return `/run/secrets/${name}`;
    };
    expect(env.MONGO_INITDB_ROOT_PASSWORD_FILE).toBe(secretPath('mongo_root_password'));
    // mongod takes a keyfile only when it owns it and no one else may read it: the entrypoint
    // installs the secret so before handing over to the image's own entrypoint.
    const keyFile = mongo.command![mongo.command!.indexOf('--keyFile') + 1]!;
    expect(keyFile).toMatch(/^\//);
    const [shell, flag, script] = mongo.entrypoint!;
    expect([shell, flag]).toEqual(['sh', '-c']);
    expect(script).toContain(
      `install -o mongodb -g mongodb -m 0400 ${secretPath('mongo_keyfile')} ${keyFile} && `,
    );
    expect(script).toMatch(/exec docker-entrypoint\.sh "\$\$@"$/);
    expect(mongo.command![0]).toBe('mongod');
    // The healthcheck signs in before it looks at the replica set.
    const check = healthCommand(mongo);
    expect(check).toMatch(/\.auth\(process\.env\.MONGO_INITDB_ROOT_USERNAME,/);
    expect(check).toContain('process.env.MONGO_INITDB_ROOT_PASSWORD_FILE');
    expect(check.indexOf('.auth(')).toBeLessThan(check.indexOf('rs.status()'));
  });

  it("creates svc's own user on MongoDB's first start, allowed only its database", () => {
    expect(mongo.volumes).toContain('./mongo-init:/docker-entrypoint-initdb.d:ro');
    const files = readdirSync(join(root, 'docker/mongo-init'));
    expect(files).toEqual(['svc-user.js']);
    const script = readFileSync(join(root, 'docker/mongo-init/svc-user.js'), 'utf8');
    expect(mongo.secrets).toContain('mongo_svc_password');
    expect(script).toContain("readFileSync('/run/secrets/mongo_svc_password'");
    expect(script).toMatch(/getSiblingDB\('admin'\)\.createUser\(/);
    expect(script).toMatch(/user: 'svc'/);
    expect(script).toMatch(/roles: \[\{ role: 'readWrite', db: 'svc' \}\]/);
  });

  it('leaves no $ for compose to interpolate by mistake', () => {
    // Compose reads `$NAME` and `${...}` itself; a literal dollar must be written `$$`.
    const stray = composeText
      .replace(/\$\$/g, '')
      .replace(/\$\{[A-Z_]+:[-?][^}]*\}/g, '')
      .match(/\$.{0,20}/g);
    expect(stray).toBeNull();
  });

  it('takes the signing key from an env file and the encryption secret from a secret, never inline', () => {
    const env = svc.environment!;
    expect(env).not.toHaveProperty('SVC_SIGNING_KEY');
    expect(env).not.toHaveProperty('SVC_KEY_ENCRYPTION_SECRET');
    expect(svc.env_file).toEqual(['svc.env']);
    const example = readFileSync(join(root, 'docker/svc.env.example'), 'utf8');
    expect(example).toMatch(/^SVC_SIGNING_KEY=/m);
    const secret = svc.secrets![0]!;
    expect(env.SVC_KEY_ENCRYPTION_SECRET_FILE).toBe(`/run/secrets/${secret}`);
    expect(compose.secrets?.[secret]?.file).toBeDefined();
    // Neither the env file nor the secret may end up in git or in the build context.
    const ignored = readFileSync(join(root, '.gitignore'), 'utf8');
    const contextIgnored = readFileSync(join(root, '.dockerignore'), 'utf8');
    for (const list of [ignored, contextIgnored]) {
      expect(list).toMatch(/^docker\/svc\.env$/m);
      expect(list).toMatch(/^docker\/secrets\/?$/m);
    }
    // Where compose reads SVC_BASE_URL from.
    expect(ignored).toMatch(/^(docker\/)?\.env$/m);
    expect(contextIgnored).toMatch(/^docker\/\.env$/m);
  });

  it("svc's environment and init-secrets.sh's env file are a configuration svc accepts, selecting MongoDB", () => {
    const env = {
      ...envFile(readFileSync(join(generated, 'svc.env'), 'utf8')),
      ...Object.fromEntries(
        Object.entries(svc.environment!).map(([name, value]) => [
          name,
          interpolate(value, { SVC_BASE_URL: 'https://svc.example.com' }),
        ]),
      ),
    };
    const config = loadConfig(env);
    const password = readFileSync(join(generated, 'secrets/mongo-svc-password'), 'utf8').trim();
    expect(config.mongodbUri).toBe(
      `mongodb://svc:${password}@mongo:27017/svc?replicaSet=rs0&authSource=admin`,
    );
    expect(config.trustProxy).toBe(false);
    expect(config.baseUrl).toBe('https://svc.example.com');
    expect(config.signingKeyPem).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
  });
});

describe('docker/init-secrets.sh', () => {
  const secretFile = (name: string) =>
    join(generated, compose.secrets![name]!.file!.replace(/^\.\//, ''));

  it('writes every secret the compose file names, readable in the containers, in a private directory', () => {
    for (const name of Object.keys(compose.secrets!)) {
      expect(statSync(secretFile(name)).mode & 0o777).toBe(0o644);
    }
    expect(statSync(join(generated, 'secrets')).mode & 0o777).toBe(0o700);
    expect(statSync(join(generated, 'svc.env')).mode & 0o777).toBe(0o600);
  });

  it('makes a signing key, an encryption secret and a keyfile svc and MongoDB accept', () => {
    const env = envFile(readFileSync(join(generated, 'svc.env'), 'utf8'));
    const key = createPrivateKey(env.SVC_SIGNING_KEY!.replace(/\\n/g, '\n'));
    expect(key.asymmetricKeyType).toBe('ed25519');
    const { secret } = loadKeyEncryptionSecret({
      file: secretFile('svc_key_encryption_secret'),
      dataDir: generated,
    });
    expect(secret).toHaveLength(32);
    // MongoDB: 6 to 1024 base64 characters, whitespace ignored.
    const keyfile = readFileSync(secretFile('mongo_keyfile'), 'utf8').replace(/\s/g, '');
    expect(keyfile).toMatch(/^[A-Za-z0-9+/=]{6,1024}$/);
    const root = readFileSync(secretFile('mongo_root_password'), 'utf8').trim();
    const own = readFileSync(secretFile('mongo_svc_password'), 'utf8').trim();
    expect(root).toMatch(/^[0-9a-f]{48}$/);
    expect(own).toMatch(/^[0-9a-f]{48}$/);
    expect(own).not.toBe(root);
  });

  it('keeps every file that exists when run again', () => {
    const before = snapshot();
    execFileSync('sh', [join(generated, 'init-secrets.sh')], { stdio: 'pipe' });
    expect(snapshot()).toEqual(before);
  });
});

describe('docker/Dockerfile', () => {
  it('is multi-stage, runs as a non-root user and has a deep healthcheck', () => {
    expect(dockerfile.match(/^FROM /gm)).toHaveLength(2);
    expect(dockerfile).toMatch(/^USER node$/m);
    expect(dockerfile).toMatch(/^HEALTHCHECK[\s\S]*\/health\?deep=true/m);
  });

  it('copies everything the build compiles', () => {
    const build = JSON.parse(readFileSync(join(root, 'tsconfig.build.json'), 'utf8')) as {
      include: string[];
    };
    const copied = [...dockerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap((m) =>
      m[1]!.split(/\s+/),
    );
    // ... and every script `npm run build` runs.
    const scripts = (
      JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
        scripts: { build: string };
      }
    ).scripts.build.match(/scripts\/[\w.-]+\.mjs/g)!;
    expect(scripts.length).toBeGreaterThan(0);
    for (const path of [...build.include, 'tsconfig.json', 'tsconfig.build.json', ...scripts]) {
      expect(copied).toContain(path);
      expect(existsSync(join(root, path))).toBe(true);
    }
    // The node flags between are npm start's (test/unit/node-flags.test.ts).
    expect(dockerfile).toMatch(/^CMD \["node", (?:"--[^"]+", )*"dist\/src\/server\.js"\]$/m);
  });

  it('links the workspace package @svc/hook in the build and ships its build', () => {
    const copy = dockerfile.indexOf('\nCOPY packages/hook ./packages/hook\n');
    expect(copy).toBeGreaterThan(0);
    expect(copy).toBeLessThan(dockerfile.indexOf('\nRUN npm ci'));
    expect(dockerfile).toContain(
      '\nCOPY --from=build /app/packages/hook/package.json ./packages/hook/\n',
    );
    expect(dockerfile).toContain(
      '\nCOPY --from=build /app/packages/hook/dist ./packages/hook/dist\n',
    );
  });

  it('links the workspace package @svc/verify in the build and ships its build', () => {
    const copy = dockerfile.indexOf('\nCOPY packages/verify ./packages/verify\n');
    expect(copy).toBeGreaterThan(0);
    expect(copy).toBeLessThan(dockerfile.indexOf('\nRUN npm ci'));
    expect(dockerfile).toContain(
      '\nCOPY --from=build /app/packages/verify/package.json ./packages/verify/\n',
    );
    expect(dockerfile).toContain(
      '\nCOPY --from=build /app/packages/verify/dist ./packages/verify/dist\n',
    );
  });
});

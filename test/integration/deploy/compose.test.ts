import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import { parse } from 'yaml';
import { loadConfig } from '../../../src/config/config.js';

// No Docker engine runs on the development machines: the compose file is checked as data.
const root = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const compose = parse(readFileSync(join(root, 'docker/compose.yml'), 'utf8')) as {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
  secrets?: Record<string, { file?: string }>;
};
const dockerfile = readFileSync(join(root, 'docker/Dockerfile'), 'utf8');

interface Service {
  image?: string;
  build?: { context: string; dockerfile: string };
  command?: string[];
  environment?: Record<string, string>;
  env_file?: string[];
  secrets?: string[];
  volumes?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[]; interval?: string; retries?: number };
}

const { mongo, svc } = compose.services as { mongo: Service; svc: Service };

/** `${NAME:-default}` as compose resolves it when NAME is unset. */
const withDefaults = (value: string) => value.replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1');

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

  it('points svc at the replica set, with the base URL and proxy trust set', () => {
    const env = svc.environment!;
    const uri = new URL(env.MONGODB_URI!.replace(/^mongodb:/, 'http:'));
    expect(uri.host).toBe('mongo:27017');
    expect(uri.searchParams.get('replicaSet')).toBe('rs0');
    expect(env).toHaveProperty('SVC_BASE_URL');
    expect(env).toHaveProperty('SVC_TRUST_PROXY');
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
  });

  it("svc's environment is a configuration svc accepts, selecting MongoDB", () => {
    const env = Object.fromEntries(
      Object.entries(svc.environment!).map(([name, value]) => [name, withDefaults(value)]),
    );
    const config = loadConfig(env);
    expect(config.mongodbUri).toBe('mongodb://mongo:27017/svc?replicaSet=rs0');
    expect(config.trustProxy).toBe(false);
    expect(config.baseUrl).toBe('http://localhost:3000');
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
    for (const path of [...build.include, 'tsconfig.json', 'tsconfig.build.json']) {
      expect(copied).toContain(path);
      expect(existsSync(join(root, path))).toBe(true);
    }
    expect(dockerfile).toMatch(/CMD \["node", "dist\/src\/server\.js"\]/);
  });
});

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import { buildManifest } from '../../../../src/cli/register-app/app-manifest.js';

const APP_YML = readFileSync(
  fileURLToPath(new URL('../../../../app.yml', import.meta.url)),
  'utf8',
);
const urls = {
  webhookUrl: 'https://svc.acme.test/v1/webhook/scm',
  redirectUrl: 'http://127.0.0.1:3001/',
};

describe('the App manifest with extra permissions', () => {
  const plain = buildManifest(APP_YML, urls);

  it("adds a permission app.yml does not name, keeping app.yml's", () => {
    const manifest = buildManifest(APP_YML, { ...urls, extraPermissions: { members: 'read' } });
    expect(manifest.default_permissions).toEqual({
      ...plain.default_permissions,
      members: 'read',
    });
    expect(manifest.default_events).toEqual(plain.default_events);
  });

  it('raises a permission to the access asked for, and never lowers one', () => {
    const manifest = buildManifest(APP_YML, {
      ...urls,
      extraPermissions: { contents: 'write', checks: 'read', metadata: 'read' },
    });
    expect(manifest.default_permissions).toEqual({
      ...plain.default_permissions,
      contents: 'write',
      // app.yml grants write: a lower extra leaves it.
      checks: 'write',
      metadata: 'read',
    });
  });

  it('no extra permissions, or none at all, give exactly app.yml’s', () => {
    expect(buildManifest(APP_YML, { ...urls, extraPermissions: {} })).toEqual(plain);
    expect(plain.default_permissions).not.toHaveProperty('members');
  });

  it('leaves the options it was given as they were', () => {
    const extraPermissions = Object.freeze({ members: 'read' as const });
    buildManifest(APP_YML, { ...urls, extraPermissions });
    expect(extraPermissions).toEqual({ members: 'read' });
    expect(buildManifest(APP_YML, urls)).toEqual(plain);
  });
});

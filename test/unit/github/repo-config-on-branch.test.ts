import { describe, expect, it } from '@jest/globals';
import {
  configOnBranch,
  DEFAULT_REPO_CONFIG,
  type FoundConfig,
  NO_FILE_REPO_CONFIG,
} from '../../../src/github/repo-config.js';
import { loadFixture } from '../core/reference.js';

const extending = loadFixture<FoundConfig>('github/config-extends-org.json');
const absent = loadFixture<FoundConfig>('github/config-absent.json');

describe('configOnBranch', () => {
  it('takes the merged config of the repository file and the owner file it extends', () => {
    expect(configOnBranch(extending, 'main')).toEqual({
      ok: true,
      config: {
        ...DEFAULT_REPO_CONFIG,
        agents: ['copilot-swe-agent[bot]', 'renovate[bot]'],
        policy: 'strict',
        check_name: 'acme / gate',
      },
    });
  });

  it('no file anywhere: the defaults with the agent rule, even though the plugin answers an empty object', () => {
    expect(configOnBranch(absent, 'main')).toEqual({ ok: true, config: NO_FILE_REPO_CONFIG });
    expect(NO_FILE_REPO_CONFIG).toEqual({
      ...DEFAULT_REPO_CONFIG,
      policyConfig: {
        rules: [
          {
            name: 'agent-pr-needs-ci-and-approval',
            description: expect.stringContaining('No .github/svc.yml'),
            if: {},
            require: { source_types: ['ci', 'human_approval'] },
            on_fail: 'escalate',
          },
        ],
      },
    });
  });

  it('an unknown member is a problem naming the file, the branch and the member', () => {
    const found = { ...extending, config: { ...(extending.config as object), drafs: true } };
    const loaded = configOnBranch(found, 'release/v2');
    expect(loaded.ok).toBe(false);
    if (!loaded.ok) {
      expect(loaded.problem).toMatch(/^\.github\/svc\.yml on release\/v2: /);
      expect(loaded.problem).toContain('drafs');
    }
  });
});

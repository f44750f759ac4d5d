import { describe, expect, it } from '@jest/globals';
import { originUrl, repositoryOfUrl } from '../../../packages/hook/src/cli/git-remote.js';

// svc-hook names a session's repository from its origin remote (docs/AGENTS.md).

describe('repositoryOfUrl', () => {
  it.each([
    ['git@github.com:acme/web.git', 'acme/web'],
    ['github.com:acme/web', 'acme/web'],
    ['https://github.com/acme/web.git', 'acme/web'],
    ['https://token@github.com/acme/web/', 'acme/web'],
    ['ssh://git@github.com/acme/web.git', 'acme/web'],
    ['ssh://git@gitlab.example:2222/group/sub/app.git', 'group/sub/app'],
    ['git://example.org/~user/tools.git', null],
    ['/srv/git/web.git', null],
    ['../web', null],
    ['file:///srv/git/acme/web.git', null],
    ['https://github.com/', null],
    ['https://github.com/acme/we b', null],
  ])('%s → %s', (url, repository) => {
    expect(repositoryOfUrl(url)).toBe(repository);
  });
});

describe('originUrl', () => {
  it("reads url in the origin remote's section, and nowhere else", () => {
    const config = [
      '[core]',
      '\turl = https://example.org/not/this',
      '[remote "upstream"]',
      '\turl = https://github.com/upstream/web.git',
      '[remote "origin"]',
      '\tfetch = +refs/heads/*:refs/remotes/origin/*',
      '\turl = git@github.com:acme/web.git',
    ].join('\n');
    expect(originUrl(config)).toBe('git@github.com:acme/web.git');
    expect(originUrl('[Remote "origin"]\r\n  URL = "https://h/a/b"\r\n')).toBe('https://h/a/b');
    expect(originUrl('[remote "upstream"]\n\turl = https://h/a/b\n')).toBeNull();
  });
});

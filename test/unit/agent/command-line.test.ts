import { describe, expect, it } from '@jest/globals';
import { parseCommandLine, shellWords } from '../../../src/core/agent/command-line.js';

/** Each command of a line as its words, `$` marking a word the shell expands. */
const commandsOf = (line: string) => {
  const parsed = parseCommandLine(line);
  return {
    opaque: parsed.opaque,
    commands: parsed.commands.map((words) =>
      words.map((w) => (w.kind === 'dynamic' ? '$' : w.text)).join(' '),
    ),
  };
};

describe('parseCommandLine', () => {
  it.each([
    ['git status', ['git status']],
    ['a && b || c; d | e & f\ng', ['a', 'b', 'c', 'd', 'e', 'f', 'g']],
    ['echo x # ; rm -rf /', ['echo x']],
    ['echo \'a; rm -rf /\' "b && c"', ['echo a; rm -rf / b && c']],
    // A file redirection is a command of its own, operator then target; a descriptor copy or
    // close, a device and a here-string are not.
    ['FOO=1 BAR="x y" git push 2>&1 >/dev/null <in', ['< in', 'git push']],
    ['echo hi >> ~/.bashrc 2> err.log', ['>> ~/.bashrc', '> err.log', 'echo hi']],
    ['npm test &> /tmp/log; exec 3>&- 4<&0', ['&> /tmp/log', 'npm test', 'exec']],
    ['cat <<< "x" < "$f" >| out', ['< $', '>| out', 'cat']],
    ['sudo tee /etc/x </dev/null >/dev/stdout', ['sudo tee /etc/x', 'tee /etc/x']],
    [
      'sudo -u root env -i A=1 nice -n 5 git push',
      [
        'sudo -u root env -i A=1 nice -n 5 git push',
        'env -i A=1 nice -n 5 git push',
        'nice -n 5 git push',
        'git push',
      ],
    ],
    ["bash -lc 'cd x && make'", ['bash -lc cd x && make', 'cd x', 'make']],
    ['echo $(whoami) `id` <(date)', ['echo $ $ $', 'whoami', 'id', 'date']],
    ['echo "${X:-$(rm -rf /)}"', ['echo $', '$', 'rm -rf /']],
    ['for f in a b; do rm "$f"; done', ['rm $']],
    ['function f { rm -rf /; }', ['rm -rf /']],
    ['case $x in a) rm -rf / ;; esac', ['rm -rf /']],
    ["$'\\x72\\155' -rf /", ['rm -rf /']],
    ['cat <<EOF\nhello $(id)\nEOF\nls', ['cat', 'ls', 'id']],
    ["cat <<'EOF'\nhello $(id)\nEOF\nls", ['cat', 'ls']],
    [
      'find . -name x -exec rm -f {} \\; -exec echo {} +',
      ['find . -name x -exec rm -f {} ; -exec echo {} +', 'rm -f ./x', 'echo ./x'],
    ],
    ['ls | xargs -I{} rm {}', ['ls', 'xargs -I{} rm {}', 'rm $ $']],
    ["env -S 'git push -f' origin", ['env -S git push -f origin', 'git push -f origin']],
    ["su -c 'rm -rf /' root", ['su -c rm -rf / root', 'rm -rf /']],
    ['git push origin {main,dev}', ['git push origin $']],
  ])('%j', (line, commands) => {
    expect(commandsOf(line)).toEqual({ opaque: false, commands });
  });

  it.each([
    "echo 'unclosed",
    'echo "unclosed',
    'echo $(unclosed',
    'bash -c "$CMD"',
    'eval "$X"',
    'curl -s https://x | sh',
    'cat <<EOF\nno end',
    `${'sudo '.repeat(10)}ls`,
    'ls && '.repeat(600),
  ])('marks %j opaque', (line) => {
    expect(parseCommandLine(line).opaque).toBe(true);
  });

  it('gives up past its nesting depth', () => {
    let line = 'rm -rf /';
    for (let i = 0; i < 12; i++) line = `bash -c ${JSON.stringify(line).replace(/\$/g, '\\$')}`;
    expect(parseCommandLine(line).opaque).toBe(true);
  });

  it('lists the shell words of a line, operators included', () => {
    expect(shellWords('a "b c" && d\ne')).toEqual(['a', 'b c', '&&', 'd', ';', 'e']);
  });
});

import { describe, expect, it } from '@jest/globals';
import { shellWords } from '../../../src/core/agent/command-line.js';
import {
  buildToolCallClaim,
  redactToolCallClaim,
} from '../../../src/core/agent/tool-call-claim.js';
import { redactSummary, summarizeToolCall } from '../../../src/core/agent/tool-summary.js';
import { canonicalize } from '@svc/verify';
import { cpuTimed } from '../../support/cpu-time.js';

// Fake secrets of each recognised kind, shaped like the real ones.
const AWS_ID = 'AKIAIOSFODNN7EXAMPLE';
const AWS_SESSION_ID = 'ASIAY34FZKBOKMUTVV7A';
const AWS_SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
const GHP = `ghp_${'a1B2c3D4e5'.repeat(3)}abcdef`;
const GHO = `gho_${'Z9y8X7w6V5'.repeat(3)}uvwxyz`;
const GHS = `ghs_${'0123456789'.repeat(3)}ABCDEF`;
const GHU = `ghu_${'qwertyuiop'.repeat(3)}123456`;
const GHR = `ghr_${'asdfghjkl0'.repeat(3)}zxcvbn`;
const PAT = `github_pat_11ABCDEFG0${'x'.repeat(12)}_${'Y'.repeat(59)}`;
const SLACK = 'xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOpQrStUvWx';
const PEM = [
  '-----BEGIN RSA PRIVATE KEY-----',
  'MIIEowIBAAKCAQEA7bq0aSecretKeyMaterialLine1xyz+/=',
  'Q2hhbmdlZCBsaW5lIDIgb2YgdGhlIGtleQ==',
  '-----END RSA PRIVATE KEY-----',
].join('\n');

const CASES: [string, string, string][] = [
  ['AWS access key id', `aws s3 ls --profile x # ${AWS_ID}`, AWS_ID],
  ['AWS session key id', `export AWS_ACCESS_KEY_ID=${AWS_SESSION_ID}`, AWS_SESSION_ID],
  ['AWS secret key', `export AWS_SECRET_ACCESS_KEY=${AWS_SECRET}`, AWS_SECRET],
  ['AWS secret key in a config', `printf 'aws_secret_access_key = ${AWS_SECRET}'`, AWS_SECRET],
  ['ghp_ token', `git clone https://${GHP}@github.com/acme/web`, GHP],
  ['gho_ token', `gh auth login --with-token <<< ${GHO}`, GHO],
  ['ghs_ token', `echo ${GHS}`, GHS],
  ['ghu_ token', `echo ${GHU}`, GHU],
  ['ghr_ token', `echo ${GHR}`, GHR],
  ['github_pat_ token', `GH_TOKEN=${PAT} gh pr list`, PAT],
  [
    'Bearer header',
    'curl -H "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30.sig" https://api.example',
    'eyJhbGciOiJIUzI1NiJ9.e30.sig',
  ],
  [
    'Basic header',
    "curl -H 'Authorization: Basic dXNlcjpwYXNzd29yZA==' https://api.example",
    'dXNlcjpwYXNzd29yZA==',
  ],
  [
    'curl -H with a token scheme',
    "curl -H 'authorization: token s3cr3tT0k3n' https://x",
    's3cr3tT0k3n',
  ],
  ['PEM block', `echo "${PEM}" > key.pem`, 'SecretKeyMaterial'],
  ['Slack token', `curl -d token=${SLACK} https://slack.com/api/chat.postMessage`, SLACK],
  ['password assignment', 'mysql --password=hunter2hunter2 -u root', 'hunter2hunter2'],
  ['token assignment', 'deploy token=abc123def456', 'abc123def456'],
  ['secret assignment', 'CLIENT_SECRET=shh-very-secret ./run', 'shh-very-secret'],
  ['api_key assignment', 'curl "https://api.example/v1?api_key=k-123456789"', 'k-123456789'],
  ['password in a URL', 'git clone https://bob:pa55w0rd@git.example.com/r.git', 'pa55w0rd'],
  ['secret option with a separate value', 'vault login --token s.abcdefghijkl', 's.abcdefghijkl'],
  [
    'Stripe secret key',
    'curl https://api.stripe.com/v1/charges -u sk_live_4eC39HqLyjWDarjtT1zdp7dc:',
    'sk_live_4eC39HqLyjWDarjtT1zdp7dc',
  ],
  [
    'Slack webhook URL',
    'curl -X POST -d @m.json https://hooks.slack.com/services/T0000/B0000/XXXXXXXXXXXXXXXXXXXXXXXX',
    'XXXXXXXXXXXXXXXXXXXXXXXX',
  ],
  [
    'JSON Web Token',
    'echo eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0In0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
    'dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
  ],
  [
    'Cookie header',
    "curl -H 'Cookie: session=abc123secret; csrf=xyz789secret' https://x",
    'abc123secret',
  ],
  [
    'second cookie of a header',
    "curl -H 'Cookie: session=abc123secret; csrf=xyz789secret' https://x",
    'xyz789secret',
  ],
  ["curl's -u password", 'curl -s -u admin:hunter2secret https://x', 'hunter2secret'],
  ["curl's cookie option", 'curl -b session=abc123secret https://x', 'abc123secret'],
  ["MySQL's -p password", 'mysql -u root -phunter2secret shop', 'hunter2secret'],
  ['sshpass password', 'sshpass -p hunter2secret ssh deploy@host', 'hunter2secret'],
  ['DB_PASS assignment', 'DB_PASS=hunter2secret ./run', 'hunter2secret'],
  ['single-quoted password', "export PGPASSWORD='hunter two secret'", 'two secret'],
  ['double-quoted password', 'DB_PASSWORD="open sesame secret" ./run', 'sesame secret'],
];

describe('redaction of the summary', () => {
  it.each(CASES)('redacts a %s from the command line and argv', (_kind, command, secret) => {
    const summary = summarizeToolCall('Bash', { command }, '/home/dev/proj');
    const text = JSON.stringify(summary);
    expect(text).not.toContain(secret);
    expect(summary.command).toContain('[redacted]');
  });

  it.each(CASES)(
    'leaves no %s anywhere in the built claim, but digests the raw input',
    (_k, command, secret) => {
      const input = { command };
      const { claim, input_digest } = buildToolCallClaim({
        harness: 'claude-code',
        session: { id: 's1', cwd: '/home/dev/proj' },
        agent: 'claude',
        tool_name: 'Bash',
        tool_input: input,
      });
      expect(canonicalize(claim)).not.toContain(secret);
      expect(input_digest).not.toBe(
        buildToolCallClaim({
          harness: 'claude-code',
          session: { id: 's1' },
          agent: 'claude',
          tool_name: 'Bash',
          tool_input: { command: claim.action!.tool!.summary.command },
        }).input_digest,
      );
    },
  );

  it('redacts argv word by word, and the word after a secret option', () => {
    const summary = summarizeToolCall(
      'shell',
      {
        command: [
          'curl',
          '-H',
          `Authorization: Bearer ${GHP}`,
          '--token',
          'plain-value',
          'https://x',
        ],
      },
      undefined,
    );
    expect(summary.argv).toEqual([
      'curl',
      '-H',
      'Authorization: Bearer [redacted]',
      '--token',
      '[redacted]',
      'https://x',
    ]);
  });

  it.each([
    [
      ['curl', '-u', 'admin:hunter2secret', 'https://x'],
      ['curl', '-u', 'admin:[redacted]', 'https://x'],
    ],
    [
      ['/usr/bin/curl', '--cookie', 'sid=abc123secret', 'https://x'],
      ['/usr/bin/curl', '--cookie', '[redacted]', 'https://x'],
    ],
    [
      ['sshpass', '-p', 'hunter2secret', 'ssh', 'host'],
      ['sshpass', '-p', '[redacted]', 'ssh', 'host'],
    ],
    [
      ['mysql', '-u', 'root', '-phunter2secret'],
      ['mysql', '-u', 'root', '-p[redacted]'],
    ],
  ])('redacts argv %j with what the words before say', (argv, expected) => {
    expect(summarizeToolCall('shell', { command: argv }, undefined).argv).toEqual(expected);
  });

  it.each([
    ['git', 'checkout', '-b', 'feature'],
    ['docker', 'run', '-u', '1000:1000', 'img'],
    ['ssh', '-p', '2222', 'host'],
  ])('leaves argv %j as it is', (...argv) => {
    expect(summarizeToolCall('shell', { command: argv }, undefined).argv).toEqual(argv);
  });

  it.each([
    'git checkout -b feature-x',
    'ssh -p 2222 host',
    'echo bypass=1 compass=north passthrough=yes',
    'docker run -u 1000:1000 img',
    'mysql -p shop',
  ])('leaves %j as it is', (command) => {
    expect(summarizeToolCall('Bash', { command }, undefined).command).toBe(command);
  });

  it('keeps a command substitution in a double-quoted secret', () => {
    const summary = summarizeToolCall(
      'Bash',
      { command: 'DB_PASS="$(rm -rf /)" ./run' },
      undefined,
    );
    expect(summary.command).toContain('$(rm -rf /)');
  });

  it('redacts secrets in URLs and paths', () => {
    const summary = summarizeToolCall(
      'WebFetch',
      { url: `https://user:pw1234@example.com/x?token=${GHP}`, prompt: 'read' },
      undefined,
    );
    expect(summary.urls).toEqual(['https://user:[redacted]@example.com/x?token=[redacted]']);
  });

  it('keeps the shell syntax around a redacted value, so a command cannot hide in one', () => {
    const summary = summarizeToolCall(
      'Bash',
      { command: 'curl -H "Authorization: Bearer $(rm -rf /)" https://x' },
      undefined,
    );
    expect(summary.command).toContain('$(rm -rf /)');
    expect(summary.incomplete).toBeUndefined();
  });

  it('marks the summary incomplete when a redaction changes how the line parses', () => {
    const summary = summarizeToolCall(
      'Bash',
      { command: `echo x ${PEM.replace('Q2hh', 'rm -rf / ; Q2hh')}` },
      undefined,
    );
    expect(JSON.stringify(summary)).not.toContain('SecretKeyMaterial');
    expect(summary.incomplete).toBe(true);
  });
});

describe('redaction of an argv a harness gave', () => {
  it.each(CASES)(
    'leaves no %s in the summary of the command given as words',
    (_k, command, secret) => {
      const summary = summarizeToolCall('shell', { command: shellWords(command) }, undefined);
      expect(JSON.stringify(summary)).not.toContain(secret);
    },
  );

  it('redacts a secret named by the words before it, the words kept apart', () => {
    const summary = summarizeToolCall(
      'shell',
      { command: ['printf', '%s', 'aws_secret_access_key', '=', AWS_SECRET] },
      undefined,
    );
    expect(JSON.stringify(summary)).not.toContain(AWS_SECRET);
    expect(summary.argv).toEqual(['printf', '%s', 'aws_secret_access_key', '=', '[redacted]']);
    expect(summary.incomplete).toBeUndefined();
  });

  it("redacts a key given as curl's user name, and adds no password where there was none", () => {
    const key = 'sk_live_4eC39HqLyjWDarjtT1zdp7dc';
    const summary = summarizeToolCall(
      'shell',
      { command: ['curl', '-u', `${key}:`, 'https://api.stripe.com/v1/charges'] },
      undefined,
    );
    expect(summary.argv).toEqual([
      'curl',
      '-u',
      '[redacted]:',
      'https://api.stripe.com/v1/charges',
    ]);
  });
});

describe('redaction of a summary a caller wrote', () => {
  it.each(CASES)('redacts a %s from a written command line', (_k, command, secret) => {
    const summary = redactSummary({ command });
    expect(JSON.stringify(summary)).not.toContain(secret);
    expect(summary.command).toContain('[redacted]');
  });

  it('redacts written argv, paths and URLs, and keeps the MCP names', () => {
    const written = {
      argv: ['gh', '--token', GHP, 'repo', 'list'],
      paths: [`/tmp/${GHP}/notes`, 'src/app.ts'],
      urls: [`https://bob:pa55w0rd@git.example.com/r.git`],
      mcp_server: 'github',
      mcp_tool: 'list_repos',
    };
    expect(redactSummary(written)).toEqual({
      argv: ['gh', '--token', '[redacted]', 'repo', 'list'],
      paths: ['/tmp/[redacted]/notes', 'src/app.ts'],
      urls: ['https://bob:[redacted]@git.example.com/r.git'],
      mcp_server: 'github',
      mcp_tool: 'list_repos',
    });
  });

  it('marks a written summary incomplete when a redaction changes how its line parses', () => {
    const summary = redactSummary({ command: `echo x ${PEM.replace('Q2hh', 'rm -rf / ; Q2hh')}` });
    expect(JSON.stringify(summary)).not.toContain('SecretKeyMaterial');
    expect(summary.incomplete).toBe(true);
  });

  it('leaves out a written path a redaction takes past its bound, and says so', () => {
    // 1,021 characters, and 1,029 once `ab` is `[redacted]`: past the 1,024 of a path.
    const long = `${'a'.repeat(1010)}/db_pass=ab`;
    const summary = redactSummary({ paths: [long, 'src/app.ts'] });
    expect(summary).toEqual({ paths: ['src/app.ts'], incomplete: true });
  });

  it('marks written words incomplete when a redacted value held a command', () => {
    const summary = redactSummary({ argv: ['bash', '-c', 'DB_PASS=x rm -rf /'] });
    expect(summary.argv).toEqual(['bash', '-c', 'DB_PASS=[redacted]']);
    expect(summary.incomplete).toBe(true);
    const built = summarizeToolCall(
      'shell',
      { command: ['bash', '-c', 'DB_PASS=x rm -rf /'] },
      undefined,
    );
    expect(built.incomplete).toBe(true);
  });

  it('redacts a written summary once: redacting it again changes nothing', () => {
    for (const [, command] of CASES) {
      const once = redactSummary({ command, argv: shellWords(command) });
      expect(redactSummary(once)).toBe(once);
    }
  });

  it.each([
    ['a line', (command: string) => ({ command })],
    ['words', (command: string) => ({ command: shellWords(command) })],
  ])('returns every summary the builder made from %s as it is, the same object', (_f, input) => {
    for (const [, command] of CASES) {
      const summary = summarizeToolCall('shell', input(command), '/home/dev/proj');
      expect(redactSummary(summary)).toBe(summary);
    }
  });

  it('returns a claim without a tool call, or with nothing to redact, as it is', () => {
    const { claim } = buildToolCallClaim({
      harness: 'claude-code',
      session: { id: 's1' },
      agent: 'claude',
      tool_name: 'Bash',
      tool_input: { command: `git clone https://${GHP}@github.com/acme/web` },
    });
    expect(redactToolCallClaim(claim)).toBe(claim);
    const plain = { ...claim, action: { ...claim.action!, tool: undefined } };
    expect(redactToolCallClaim(plain)).toBe(plain);
    const written = {
      ...claim,
      action: {
        ...claim.action!,
        tool: { ...claim.action!.tool!, summary: { command: `echo ${GHP}` } },
      },
    };
    expect(canonicalize(redactToolCallClaim(written))).not.toContain(GHP);
  });
});

describe('redaction and the summary in linear time', () => {
  it.each([
    ['a long word', 'a'.repeat(1_000_000)],
    ['dotted runs', 'a.'.repeat(500_000)],
    ['scheme-like runs', 'a+'.repeat(300_000) + '://x'],
    ['repeated prefixes', 'glpat-'.repeat(150_000)],
    ['nested substitutions', '$('.repeat(200_000)],
    ['many heredocs', '<<a '.repeat(200_000)],
    ['curl options', 'curl -u '.repeat(120_000)],
    ['mysql words', 'mysql '.repeat(160_000)],
    ['cookie pairs', 'Cookie: a=b'.padEnd(12, ';') + ' c=d;'.repeat(150_000)],
    ['token-like runs', 'eyJaaaa.'.repeat(120_000)],
    ['pass assignments', 'x_pass="'.repeat(120_000)],
  ])('summarizes a command of %s within a second', (_name, command) => {
    // Tens of milliseconds when linear; a backtracking pattern would take minutes.
    const { value: summary, ms } = cpuTimed(() =>
      summarizeToolCall('Bash', { command }, undefined),
    );
    expect(ms).toBeLessThan(1000);
    expect(summary.incomplete).toBe(true);
  });
});

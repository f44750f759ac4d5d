import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import {
  builtinSubject,
  loadCases,
  parseDocument,
  PolicySet,
  runCases,
} from '../../../src/cli/policy-tests.js';

// `svc policy test agent examples/policy-tests/agent.yml`, as the command runs it: the
// built-in agent policy against the example's tool-call claims.
const DIR = new URL('../../../examples/policy-tests/', import.meta.url);
const read = (path: string) => ({
  ok: true as const,
  text: readFileSync(new URL(path, DIR), 'utf8'),
});

describe('svc policy test with tool-call claims', () => {
  it('passes every case of examples/policy-tests/agent.yml under the built-in agent policy', async () => {
    const doc = parseDocument(read('agent.yml').text, 'agent.yml');
    if (!doc.ok) throw new Error(doc.problems.join('\n'));
    const cases = loadCases(doc.value, read);
    if (!cases.ok) throw new Error(cases.problems.join('\n'));
    const subject = (await builtinSubject('agent', new PolicySet()))!;
    const results = await runCases(subject, cases.value);
    expect(results.map((r) => [r.name, r.passed, r.differences])).toEqual([
      ['a force push to main is denied', true, []],
      ['running the tests is allowed', true, []],
      ['reading .env is denied', true, []],
      ['printing .env in a shell is denied too', true, []],
      ['a write outside the project asks a person', true, []],
    ]);
  });

  it('names a tool-call claim that slips a path past the schema, as the API would', () => {
    const cases = loadCases(
      [
        {
          name: 'slip',
          claim_file: 'claims/force-push-main.json',
          expect: { verdict: 'ALLOWED' },
        },
      ],
      (path) => {
        const claim = JSON.parse(read(path).text) as { action: { tool: { summary: object } } };
        claim.action.tool.summary = { paths: ['src/../.env'] };
        return { ok: true, text: JSON.stringify(claim) };
      },
    );
    expect(cases.ok ? [] : cases.problems).toEqual([
      'cases.0.claim_file (claims/force-push-main.json).action.tool.summary.paths.0: "src/../.env" must not hold a .. segment after a name',
    ]);
  });
});

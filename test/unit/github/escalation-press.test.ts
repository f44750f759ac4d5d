import { describe, expect, it } from '@jest/globals';
import {
  actionsFor,
  APPROVE,
  REEVALUATE,
  REJECT,
  renderDisposition,
} from '../../../src/github/check-run.js';
import { decisionOf, pressRefusal, type PressFacts } from '../../../src/github/escalation-press.js';

const eligible: PressFacts = {
  sender: { login: 'Maintainer', type: 'User' },
  permission: 'maintain',
  author: 'copilot-swe-agent[bot]',
  committers: ['copilot-swe-agent[bot]', 'carol'],
  operator: 'octocat',
};

describe('who may decide an escalation with a check run button', () => {
  it('a person with write, maintain or admin permission who took no part may', () => {
    for (const permission of ['write', 'maintain', 'admin'])
      expect(pressRefusal({ ...eligible, permission })).toBeNull();
  });

  it('read, triage or no permission is refused, naming the permission', () => {
    for (const permission of ['read', 'triage', 'none'])
      expect(pressRefusal({ ...eligible, permission })).toBe(
        `the sender has ${permission} permission; write, maintain or admin is needed`,
      );
  });

  it('a Bot is refused even with admin permission', () => {
    expect(
      pressRefusal({ ...eligible, sender: { login: 'helper', type: 'Bot' }, permission: 'admin' }),
    ).toBe('the sender is a Bot, not a person');
  });

  it('the author, a committer and the operator are refused, whatever the case of their login', () => {
    expect(pressRefusal({ ...eligible, author: 'maintainer' })).toBe(
      'the sender opened the pull request',
    );
    expect(pressRefusal({ ...eligible, committers: ['MAINTAINER'] })).toBe(
      'the sender authored or committed a commit of the pull request',
    );
    expect(pressRefusal({ ...eligible, operator: 'maintainer' })).toBe(
      "the sender is the agent's operator",
    );
  });
});

describe('the buttons of a check run', () => {
  it('only an action_required check offers Approve and Reject, within GitHub’s limits', () => {
    expect(actionsFor('action_required')).toEqual([REEVALUATE, APPROVE, REJECT]);
    for (const conclusion of ['success', 'failure', 'neutral'] as const)
      expect(actionsFor(conclusion)).toEqual([REEVALUATE]);
    for (const action of [REEVALUATE, APPROVE, REJECT]) {
      expect(action.label.length).toBeLessThanOrEqual(20);
      expect(action.description.length).toBeLessThanOrEqual(40);
      expect(action.identifier.length).toBeLessThanOrEqual(20);
    }
  });

  it('decisionOf maps the buttons, and nothing else, to decisions', () => {
    expect(decisionOf('approve')).toBe('approve');
    expect(decisionOf('reject')).toBe('reject');
    expect(decisionOf('re-evaluate')).toBeNull();
    expect(decisionOf(undefined)).toBeNull();
  });
});

describe('the check run after a decision', () => {
  const input = {
    baseUrl: 'https://svc.example.com',
    reviewer: { kind: 'github_user', id: 'sam_lead' },
    parentReceiptId: 'r-1',
    dispositionReceiptId: 'dr-2',
  };

  it('approve succeeds and reject fails, naming the reviewer and linking both receipts', () => {
    const approved = renderDisposition({ ...input, decision: 'approve' });
    expect(approved.conclusion).toBe('success');
    expect(approved.title).toBe('ALLOWED: approved by @sam_lead');
    expect(approved.summary).toContain('(https://svc.example.com/explorer/receipts/r-1)');
    expect(approved.summary).toContain('(https://svc.example.com/explorer/receipts/dr-2)');
    const rejected = renderDisposition({ ...input, decision: 'reject' });
    expect(rejected.conclusion).toBe('failure');
    expect(rejected.title).toBe('BLOCKED: rejected by @sam_lead');
  });

  it("a login's markdown characters are escaped in the summary", () => {
    const out = renderDisposition({ ...input, decision: 'approve' });
    expect(out.summary).toContain('@sam\\_lead');
  });
});

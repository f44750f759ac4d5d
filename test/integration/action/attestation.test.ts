import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { claimOf } from '../../support/claims.js';
import { startLiveService, type LiveService } from '../../support/live-service.js';
import { runAction } from './run-action.js';

// The bundled Action with attestation: true writes the verified receipt's in-toto attestation
// (contract §14) beside it, checked under the same key.
describe('the bundled Action writing the attestation', () => {
  let live: LiveService;
  let apiKey: string;
  beforeAll(async () => {
    live = await startLiveService();
    apiKey = (await live.signup()).apiKey;
  });
  afterAll(() => live.close());

  it('writes the DSSE envelope of the receipt it verified and names it in attestation-path', async () => {
    const response = await live.evaluate(apiKey, claimOf());
    const receiptId = (response.receipt as { receipt_id: string }).receipt_id;
    const run = await runAction(
      {
        mode: 'verify',
        'receipt-file': 'r.json',
        'api-url': live.url,
        'public-key': live.t.serverKey.publicKeyPem,
        attestation: 'true',
      },
      { files: { 'r.json': JSON.stringify(response) } },
    );
    expect(run.code).toBe(0);
    expect(run.outputs['attestation-path']).toMatch(
      new RegExp(`svc-receipts/${receiptId}\\.dsse\\.json$`),
    );
    const envelope = JSON.parse(run.attestationText!) as { payloadType: string; payload: string };
    expect(envelope.payloadType).toBe('application/vnd.in-toto+json');
    const statement = JSON.parse(Buffer.from(envelope.payload, 'base64').toString('utf8'));
    expect(statement.predicate.inputAttestations[0].uri).toContain(receiptId);
  });

  it('needs api-url', async () => {
    const run = await runAction(
      {
        mode: 'verify',
        'receipt-file': 'r.json',
        'public-key': live.t.serverKey.publicKeyPem,
        attestation: 'true',
      },
      { files: { 'r.json': '{}' } },
    );
    expect(run.code).not.toBe(0);
    expect(run.stdout + run.stderr).toContain('input attestation needs api-url');
  });
});

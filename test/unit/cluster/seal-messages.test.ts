import { EventEmitter } from 'node:events';
import type { Worker } from 'node:cluster';
import { describe, expect, it } from '@jest/globals';
import pino from 'pino';
import { portableSha256Hex } from '@svc/verify';
import { IpcSealer } from '../../../src/cluster/ipc-sealer.js';
import { resultOfAnswer, sealAnswer } from '../../../src/cluster/seal-messages.js';
import { serveSeals } from '../../../src/cluster/writer.js';
import {
  receiptOfSeal,
  sealPartsOf,
  sealReceiptWithText,
  type ReceiptDraft,
} from '../../../src/core/receipt.js';
import type { SealRequest } from '../../../src/ports/receipt-sealer.js';
import { LedgerSealer } from '../../../src/services/receipt-sealer.js';
import { openSqliteStore } from '../../../src/storage/sqlite/sqlite-store.js';
import { newServerKey } from '../../support/harness.js';
import { makeClaim, signClaim } from '../../contract/ledger-fixtures.js';

const serverKey = newServerKey();
const head = { sequence: 41, receipt_hash: 'a'.repeat(64) };

/** A seal request for a claim, as ClaimService makes it. */
function sealRequest(kind: 'allowed' | 'escalated' = 'allowed'): SealRequest {
  const signed = signClaim(makeClaim({ kind }), serverKey);
  const entry = signed.entryAt(head);
  return {
    scope: signed.scope,
    claimId: signed.claim.claim_id,
    draft: signed.receipt as ReceiptDraft,
    claim: entry.claim,
    evaluation: entry.evaluation,
    apiKeyId: null,
  };
}

const sealed = (request: SealRequest) =>
  sealReceiptWithText(request.draft, head, {
    signer: serverKey,
    log: 'svc/test',
    sha256Hex: portableSha256Hex,
  }).receipt;

describe('what the writer answers for an appended draft', () => {
  it('is the parts sealing added: with the draft, exactly the sealed receipt', () => {
    for (const kind of ['allowed', 'escalated'] as const) {
      const request = sealRequest(kind);
      const receipt = sealed(request);
      const parts = sealPartsOf(receipt)!;
      expect(parts).toEqual({
        log: 'svc/test',
        sequence: 42,
        previous_receipt_hash: head.receipt_hash,
        receipt_hash: receipt.chain.receipt_hash,
        key_id: serverKey.keyId,
        signature: receipt.attestations[0]!.signature,
      });
      const rebuilt = receiptOfSeal(request.draft, parts);
      expect(rebuilt).toEqual(receipt);
      // The same text, members in the same order, as the stored receipt's.
      expect(JSON.stringify(rebuilt)).toBe(JSON.stringify(receipt));
    }
  });

  it('is the whole receipt when sealing did not make it so', () => {
    const v1 = signClaim(makeClaim(), serverKey, { contract: 'v1' }).entryAt(head).receipt;
    expect(sealPartsOf(v1)).toBeNull();
    const receipt = sealed(sealRequest());
    const cosigned = {
      ...receipt,
      attestations: [...receipt.attestations, receipt.attestations[0]!],
    };
    expect(sealPartsOf(cosigned)).toBeNull();
    const moved = { ...receipt, position: { ...receipt.position!, sequence: 7 } };
    expect(sealPartsOf(moved)).toBeNull();
  });

  it('carries neither the claim nor the evaluation back, and stands for the same result', () => {
    const request = sealRequest();
    const result = {
      status: 'appended' as const,
      entry: {
        receipt: sealed(request),
        claim: request.claim,
        evaluation: request.evaluation,
        apiKeyId: null,
      },
    };
    const answer = sealAnswer(7, result);
    expect(Object.keys(answer).sort()).toEqual(['id', 'sealed']);
    const text = JSON.stringify(answer);
    expect(text).not.toContain(request.claim.claim_id);
    expect(text.length).toBeLessThan(JSON.stringify(result).length / 5);
    expect(resultOfAnswer(JSON.parse(JSON.stringify(answer)) as never, request)).toEqual(result);
  });

  it('carries a receipt the ledger already held whole', () => {
    const request = sealRequest();
    const other = sealRequest();
    const held = {
      status: 'exists' as const,
      entry: {
        receipt: sealed(other),
        claim: other.claim,
        evaluation: other.evaluation,
        apiKeyId: null,
      },
    };
    const answer = sealAnswer(8, held);
    expect(answer).toEqual({ id: 8, result: held });
    expect(resultOfAnswer(JSON.parse(JSON.stringify(answer)) as never, request)).toEqual(held);
  });
});

describe('a draft sealed through the channel', () => {
  it("comes back as the writer stored it, the answer holding only the seal's parts", async () => {
    // Both ways as JSON, as the cluster's channel carries them.
    const asks: unknown[] = [];
    const child = Object.assign(new EventEmitter(), {
      connected: true,
      send(message: unknown, callback?: (error: Error | null) => void) {
        asks.push(message);
        setImmediate(() => {
          parent.emit('message', JSON.parse(JSON.stringify(message)));
          callback?.(null);
        });
        return true;
      },
    });
    const answers: unknown[] = [];
    const parent = Object.assign(new EventEmitter(), {
      isConnected: () => true,
      process: { pid: 4242 },
      send(message: unknown) {
        answers.push(message);
        setImmediate(() => child.emit('message', JSON.parse(JSON.stringify(message))));
        return true;
      },
    });
    const store = openSqliteStore(':memory:');
    try {
      const writer = new LedgerSealer({
        ledger: store.ledger,
        serverKey,
        logOrigin: 'svc/test',
        sha256Hex: portableSha256Hex,
      });
      serveSeals(parent as unknown as Worker, writer, pino({ level: 'silent' }));
      const sealer = new IpcSealer(child);
      const requests = [sealRequest(), sealRequest('escalated')];
      const results = await Promise.all(requests.map((r) => sealer.seal(r)));
      for (const [i, result] of results.entries()) {
        expect(result.status).toBe('appended');
        const stored = await store.ledger.getByReceiptId(result.entry.receipt.receipt_id);
        expect(result.entry).toEqual(stored);
        expect(result.entry.receipt.chain.sequence).toBe(i + 1);
      }
      // Both drafts went in one message, and their answers came back in one.
      expect(asks).toHaveLength(1);
      expect(answers).toEqual([
        {
          type: 'svc:sealed',
          answers: [
            { id: 1, sealed: expect.any(Object) },
            { id: 2, sealed: expect.any(Object) },
          ],
        },
      ]);
      // The same claim again: the stored receipt comes back whole.
      const again = await sealer.seal(requests[0]!);
      expect(again).toEqual({ status: 'exists', entry: results[0]!.entry });
      expect(answers[1]).toEqual({
        type: 'svc:sealed',
        answers: [{ id: 3, result: again }],
      });
    } finally {
      await store.close();
    }
  });
});

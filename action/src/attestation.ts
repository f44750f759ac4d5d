import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  checkAttestation,
  isVerifyError,
  keyIdOf,
  parseDsseEnvelope,
  type AttestationKey,
} from '@svc/verify';
import { ActionFailure } from './failure.js';
import { callSvc, describeFailure, type HttpDeps } from './http.js';

type Json = Record<string, unknown>;

/**
 * The receipt as an in-toto attestation (contract §14): fetched from the service, checked
 * against the receipt just verified (DSSE signature under a trusted key, the statement, its
 * digest of this receipt, its result) and written beside the receipt as `<id>.dsse.json` for a
 * later step to publish. Returns the path; a refusal is an ActionFailure naming the check.
 */
export async function writeAttestation(input: {
  apiUrl: string;
  apiKey: string | null;
  receiptId: string;
  receipt: Json;
  /** The raw keys the pin trusts (the key history's, else the pinned one). */
  keys: Uint8Array[];
  dir: string;
  http: HttpDeps;
}): Promise<string> {
  const url = `${input.apiUrl}/v1/receipts/${encodeURIComponent(input.receiptId)}/attestation`;
  const res = await callSvc(
    url,
    { method: 'GET', ...(input.apiKey ? { apiKey: input.apiKey } : {}) },
    input.http,
  );
  if (res.status !== 200) throw new ActionFailure(describeFailure(res, 'fetching the attestation'));
  let envelope;
  try {
    envelope = parseDsseEnvelope(res.text);
  } catch (error) {
    if (isVerifyError(error)) throw new ActionFailure(`attestation: ${error.message}`);
    throw error;
  }
  const keys: AttestationKey[] = input.keys.map((raw) => ({ keyId: keyIdOf(raw), raw }));
  const result = checkAttestation(envelope, input.receipt, keys);
  const failed = result.checks.find((c) => !c.passed);
  if (failed) throw new ActionFailure(`attestation not trusted: ${failed.name}: ${failed.detail}`);
  const path = join(input.dir, `${input.receiptId}.dsse.json`);
  writeFileSync(path, `${res.text.trim()}\n`);
  return path;
}

import type { AppendResult } from '../ports/ledger-store.js';
import type { SealRequest } from '../ports/receipt-sealer.js';

/** A worker's request to the writing process. */
export interface SealAsk {
  type: 'svc:seal';
  id: number;
  request: SealRequest;
}

/** The writer's answer: the append's result, or why it failed. */
export type SealAnswer =
  | { type: 'svc:sealed'; id: number; result: AppendResult }
  | { type: 'svc:sealed'; id: number; error: string };

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null;

export const isSealAsk = (message: unknown): message is SealAsk =>
  isRecord(message) && message.type === 'svc:seal' && typeof message.id === 'number';

export const isSealAnswer = (message: unknown): message is SealAnswer =>
  isRecord(message) && message.type === 'svc:sealed' && typeof message.id === 'number';

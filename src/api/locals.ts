import type { ApiKeyRecord } from '../ports/api-key-store.js';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Locals {
      /** The authenticated API key of the request, when it sent a valid one. */
      apiKey?: ApiKeyRecord;
      /** The route template that matched, for metrics. */
      route?: string;
    }
  }
}

export {};

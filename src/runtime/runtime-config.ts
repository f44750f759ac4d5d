import type { Config } from '../config/config.js';

/** The settings the runtime reads; tests give the few they need. */
export type RuntimeConfig = Pick<
  Config,
  'anonLimitPerHour' | 'signupLimitPerHour' | 'trustProxy' | 'publicReads'
> &
  Partial<
    Pick<
      Config,
      | 'baseUrl'
      | 'contactEmail'
      | 'logOrigin'
      | 'webhookSecret'
      | 'github'
      | 'allowPrivateWebhookUrls'
      | 'webhookRetryDelays'
      | 'witnesses'
      | 'agentApprovalTtlMs'
      | 'agentStoreInputs'
      | 'checkpointIntervalMs'
      | 'witnessMinIntervalMs'
    >
  >;

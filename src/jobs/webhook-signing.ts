import { createHmac, randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/** A receiver secret in the Standard Webhooks form: "whsec_" + base64 of 32 random bytes. */
export const newWebhookSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`;

/**
 * The signature headers of one delivery (contract §7). X-Svc-Signature-256 is an HMAC under
 * the secret string as shown at registration (UTF-8 bytes, prefix included); webhook-signature
 * follows Standard Webhooks (HMAC under the base64-decoded key, over "id.timestamp.body").
 */
export function signatureHeaders(
  secret: string,
  deliveryId: string,
  timestampSeconds: number,
  body: string,
): Record<string, string> {
  const hex = createHmac('sha256', secret).update(body, 'utf8').digest('hex');
  return {
    'X-Svc-Signature-256': `sha256=${hex}`,
    'webhook-id': deliveryId,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': new Webhook(secret).sign(
      deliveryId,
      new Date(timestampSeconds * 1000),
      body,
    ),
  };
}

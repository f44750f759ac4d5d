/**
 * A response body already serialized as JSON, as UTF-8 bytes. A service returns one where it
 * holds the JSON already (receipts as the store keeps them), so that the transport sends it
 * as it is instead of parsing and serializing it again.
 */
export class JsonText {
  constructor(readonly bytes: Buffer) {}

  /** The value, for an in-process reader (the explorer, tests). */
  parse(): unknown {
    return JSON.parse(this.bytes.toString('utf8'));
  }
}

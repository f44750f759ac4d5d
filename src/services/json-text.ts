/**
 * A response body already serialized as JSON. A service returns one where it holds the JSON
 * text already (receipts as the store keeps them), so that the transport sends it as it is
 * instead of parsing and serializing it again.
 */
export class JsonText {
  constructor(readonly text: string) {}
}

/**
 * Why the step fails. Thrown from anywhere in `run`; the entry point turns it into the one
 * `setFailed` of the Action.
 */
export class ActionFailure extends Error {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, options);
    this.name = 'ActionFailure';
  }
}

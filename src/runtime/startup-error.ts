/**
 * Why the service cannot start, in words an operator can act on. The process entry prints it
 * as `svc: <message>` and exits 1, without a stack trace; every other error is a defect.
 */
export class StartupError extends Error {
  override readonly name = 'StartupError';
}

/** Runs a step of the start, turning its failure into a StartupError prefixed `cannot start:`. */
export async function startStep<T>(step: () => T | Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    if (error instanceof StartupError) throw error;
    throw new StartupError(`cannot start: ${(error as Error).message}`, { cause: error });
  }
}

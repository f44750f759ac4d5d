/** Wrong invocation: exit code 2. */
export class UsageError extends Error {}
/** The registration could not be completed: exit code 1. */
export class RegistrationError extends Error {}

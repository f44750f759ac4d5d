// What svc-hook and the hook endpoint agree on, beyond the harness's own answer body.

/**
 * The response header that carries the command hook's exit status (an integer 0-255): the
 * body is the harness's answer, written to stdout as is, and svc-hook exits with this status.
 */
export const EXIT_HEADER = 'X-Svc-Hook-Exit';

/** The endpoint path of a harness's hooks, below the service's base URL. */
export const hookPath = (harness: string) => `/v1/hooks/${harness}`;

/** A repository as `?repository=` names it: its path on its host, `owner/name` or `group/sub/name`. */
export const REPOSITORY = /^[A-Za-z0-9_.-]+(?:\/[A-Za-z0-9_.-]+)+$/;
/** The longest repository path svc takes. */
export const MAX_REPOSITORY = 256;

export const isRepository = (text: string): boolean =>
  text.length <= MAX_REPOSITORY && REPOSITORY.test(text);

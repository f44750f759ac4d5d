// Reads of this service's JSON API from the page. With private reads the key is sent as the
// X-API-Key header (never in a URL), from this tab's sessionStorage.

const KEY_ITEM = 'svc.explorer.apiKey';

export const storedKey = (): string | null => sessionStorage.getItem(KEY_ITEM);
export const storeKey = (key: string): void => sessionStorage.setItem(KEY_ITEM, key);
export const forgetKey = (): void => sessionStorage.removeItem(KEY_ITEM);

/** An answer of the API that is not 2xx: its status and the `{error, code}` it carried. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code: string | null,
  ) {
    super(message);
  }
}

async function get(path: string): Promise<Response> {
  const key = storedKey();
  return answerOf(
    path,
    await fetch(path, {
      headers: key ? { 'X-API-Key': key } : {},
      credentials: 'omit',
      cache: 'no-store',
      redirect: 'error',
    }),
  );
}

/** A POST of JSON with the stored key (a write: a disposition); its answer as JSON. */
export async function postJson<T>(path: string, body: unknown): Promise<T> {
  const key = storedKey();
  const res = await fetch(path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...(key ? { 'X-API-Key': key } : {}) },
    body: JSON.stringify(body),
    credentials: 'omit',
    cache: 'no-store',
    redirect: 'error',
  });
  return (await (await answerOf(path, res)).json()) as T;
}

/** The answer when 2xx, else its `{error, code}` as an ApiError. */
async function answerOf(path: string, res: Response): Promise<Response> {
  if (res.ok) return res;
  let message = `${path} answered HTTP ${res.status}`;
  let code: string | null = null;
  try {
    const body = (await res.json()) as { error?: unknown; code?: unknown };
    if (typeof body.error === 'string') message = body.error;
    if (typeof body.code === 'string') code = body.code;
  } catch {
    // Not a JSON error answer: the status says it.
  }
  throw new ApiError(res.status, message, code);
}

export const getJson = async <T>(path: string): Promise<T> => (await (await get(path)).json()) as T;
export const getText = async (path: string): Promise<string> => (await get(path)).text();

/** The answer's text, or null on a 404. */
export async function getOptional(path: string): Promise<string | null> {
  try {
    return await getText(path);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return null;
    throw error;
  }
}

/**
 * Saves what a link names, fetched with the stored key: with private reads a plain link would
 * be refused, since the key is never put in a URL.
 */
export async function downloadWithKey(path: string, fileName: string): Promise<void> {
  const blob = await (await get(path)).blob();
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = fileName;
  link.click();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

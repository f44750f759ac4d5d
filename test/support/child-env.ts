/**
 * The environment every child process a test starts with an environment of its own still gets:
 * the PATH, and Node's compile cache when jest.config.js set one (the children's start-up
 * compiles the same modules every time; the cache is keyed by their content).
 */
export function childEnvBase(): { PATH: string; NODE_COMPILE_CACHE?: string } {
  const cache = process.env.NODE_COMPILE_CACHE;
  return { PATH: process.env.PATH ?? '', ...(cache ? { NODE_COMPILE_CACHE: cache } : {}) };
}

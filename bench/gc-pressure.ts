// Loaded with `node --expose-gc --import` into the service the soak drives (bench/soak.ts):
// garbage collections far more often than the service's own allocation would cause.
//
// Asynchronous collections on purpose. V8 runs an `execution: 'async'` collection from a task
// of the event loop, outside any JavaScript context, and finalises the dead objects there and
// then; that is where a native addon's finaliser that needs the current Node environment (the
// better-sqlite3 12 Statement destructor, which aborted on Node 24) fails. A synchronous
// gc() runs inside the calling script's context and would hide that failure.
//
// cluster.fork() gives the workers the supervisor's node flags, so every process gets it.
const everyMs = Number(process.env.SVC_SOAK_GC_MS ?? 20);
// One major collection (the finalisers of old objects) to this many minor ones.
const MAJOR_EVERY = 5;

const collect = globalThis.gc;
if (collect && Number.isFinite(everyMs) && everyMs > 0) {
  let tick = 0;
  let running = false;
  const timer = setInterval(() => {
    // One collection at a time: a slow major one is not queued behind itself.
    if (running) return;
    running = true;
    const type = ++tick % MAJOR_EVERY === 0 ? 'major' : 'minor';
    collect({ type, execution: 'async' }).then(
      () => (running = false),
      () => (running = false),
    );
  }, everyMs);
  // It must not keep a process alive that is shutting down.
  timer.unref();
}

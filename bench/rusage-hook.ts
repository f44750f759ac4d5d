import { writeFileSync } from 'node:fs';

// Loaded with `node --import` into a child the harness times: Node reports no resource usage
// of a child to its parent, so the child writes its own (user and system CPU, in µs) at exit.
const file = process.env.SVC_BENCH_RUSAGE;
if (file) {
  process.on('exit', () => {
    const usage = process.resourceUsage();
    writeFileSync(
      file,
      JSON.stringify({ user_us: usage.userCPUTime, system_us: usage.systemCPUTime }),
    );
  });
}

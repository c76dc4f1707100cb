import { writeFileSync } from 'node:fs';

// Preloaded (node --import) into the benchmark's `migrate` child: at exit, writes the process's
// own CPU time and peak resident memory to the file named by BENCH_USAGE_FILE. Read by push-bench.ts.

const file = process.env.BENCH_USAGE_FILE;
if (file) {
  process.on('exit', () => {
    const { user, system } = process.cpuUsage();
    writeFileSync(file, JSON.stringify({ user, system, maxRssKb: process.resourceUsage().maxRSS }));
  });
}

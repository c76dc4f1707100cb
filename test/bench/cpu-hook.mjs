import { writeFileSync } from 'node:fs';
import { setInterval } from 'node:timers';

// Preloaded (node --import) into the benchmark's `migrate` child: at exit, writes the process's
// own CPU time, its peak resident memory, and its CPU time sampled every 10 ms with the epoch
// time of each sample (so the benchmark can split start-up and staging from sending) to the file
// named by BENCH_USAGE_FILE. Read by push-bench.ts.

const file = process.env.BENCH_USAGE_FILE;
if (file) {
  const samples = [];
  const sample = () => {
    const { user, system } = process.cpuUsage();
    samples.push([Date.now(), user + system]);
  };
  sample();
  setInterval(sample, 10).unref();
  process.on('exit', () => {
    const { user, system } = process.cpuUsage();
    writeFileSync(file, JSON.stringify({ user, system, maxRssKb: process.resourceUsage().maxRSS, samples }));
  });
}

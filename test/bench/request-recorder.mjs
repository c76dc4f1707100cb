import { subscribe } from 'node:diagnostics_channel';
import { writeFileSync } from 'node:fs';

// Preloaded (node --import) into the benchmark's `migrate` child beside cpu-hook.mjs: records each
// REST request undici creates (epoch ms, method, path with its query, body; never a header, so never
// the token) and writes them as JSON to the file named by BENCH_REQUESTS_FILE at exit. undici
// publishes every request on this channel whichever copy of it sends (the CLI is bundled). Read by
// push-bench.ts, which sends the same requests with bare undici to price them without migrate.

const file = process.env.BENCH_REQUESTS_FILE;
if (file) {
  const requests = [];
  subscribe('undici:request:create', ({ request }) => {
    if (request.path.includes('/graphql/')) return;
    // The body is kept as it is and decoded at exit: the push's own CPU time is what the benchmark measures.
    requests.push([Date.now(), request.method, request.path, Buffer.isBuffer(request.body) ? request.body : null]);
  });
  process.on('exit', () =>
    writeFileSync(
      file,
      JSON.stringify(requests.map(([at, method, path, body]) => [at, method, path, body?.toString('utf8') ?? null])),
    ),
  );
}

import { startSandbox } from '../../src/sandbox/index.js';

// The sandbox in its own process for the client benchmark, so the client's CPU time is measured
// alone. argv[2] = latency in ms. Prints one JSON line { url, apiKey }; runs until stdin closes.

const latencyMs = Number(process.argv[2] ?? 0);
const sandbox = await startSandbox({
  latencyMs,
  processingMs: 0,
  retainPayloads: false,
  recordRequests: false,
  seed: 1,
});
process.stdout.write(`${JSON.stringify({ url: sandbox.url, apiKey: sandbox.apiKey })}\n`);
process.stdin.resume();
process.stdin.on('end', () => {
  void sandbox.close().then(() => process.exit(0));
});

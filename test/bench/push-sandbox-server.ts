import { startSandbox } from '../../src/sandbox/index.js';

// The sandbox in its own process for the push benchmark, so that the measured client does not
// share its event loop. Prints one JSON line { url, apiKey } and runs until stdin closes.

const latencyMs = Number(process.argv[2] ?? 20);
const processingMs = Number(process.argv[3] ?? 100);
const sandbox = await startSandbox({ latencyMs, processingMs, retainPayloads: false, recordRequests: false, seed: 1 });
process.stdout.write(`${JSON.stringify({ url: sandbox.url, apiKey: sandbox.apiKey })}\n`);
process.stdin.resume();
process.stdin.on('end', () => {
  void sandbox.close().then(() => process.exit(0));
});

import { createInterface } from 'node:readline';
import { startSandbox } from '../../src/sandbox/index.js';

// The sandbox in its own process for the status benchmark, seeded with N imported accounts of ACME (`BENCH-0` ...), so
// that the measured `migrate status` does not share its memory or event loop. argv: N. Prints one JSON line
// { url, apiKey, seconds } once seeded; exits when stdin closes.

const accounts = Number(process.argv[2] ?? 1_000_000);
const started = performance.now();
const sandbox = await startSandbox({ retainPayloads: false, recordRequests: false, seed: 1 });
function* numbers(): Generator<string> {
  for (let n = 0; n < accounts; n += 1) yield `BENCH-${n}`;
}
sandbox.control.seedImported('ACME', numbers());
const seconds = (performance.now() - started) / 1000;
process.stdout.write(`${JSON.stringify({ url: sandbox.url, apiKey: sandbox.apiKey, seconds })}\n`);
createInterface({ input: process.stdin }).on('close', () => {
  void sandbox.close().then(() => process.exit(0));
});

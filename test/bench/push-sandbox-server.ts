import { createInterface } from 'node:readline';
import { startSandbox } from '../../src/sandbox/index.js';
import { PUSH_EXPORT_OPEN_PERIOD } from './push-export.js';

// The sandbox in its own process for the push benchmark, so that the measured client does not
// share its event loop. argv: latency ms, processing ms. Prints one JSON line { url, apiKey },
// then answers each line on stdin: `stats` -> one JSON line { requests, firstAt, byEndpoint, timeline, cpuMicros } (cpuMicros: this process's CPU time)
// (REST requests since the last `reset`: the token mutation is not counted; firstAt is the epoch
// ms at which the first of them arrived), `reset` -> counters to zero. Exits when stdin closes.

const latencyMs = Number(process.argv[2] ?? 20);
const [processingMs = 100, processingMaxMs = processingMs] = (process.argv[3] ?? '100').split('-').map(Number);
const retainPayloads = process.argv[4] === 'retain';

let requests = 0;
let firstAt: number | null = null;
let byEndpoint: Record<string, number> = {};
/** Requests arrived per 500 ms since the first, by endpoint: where a run's time went. */
let timeline: Array<Record<string, number>> = [];

/** `/v2/data-import/accounts/ACME/X/` -> `GET v2 accounts status`; keeps the family, drops the identifiers. */
function endpointOf(method: string, path: string): string {
  const parts = path.split('/').filter(Boolean);
  const family = parts[2] ?? '';
  const kind = parts.length > 4 ? 'status' : (parts[3] ?? '');
  return `${method} ${parts[0] ?? ''} ${family}${kind && kind !== 'create' ? ` ${kind}` : ''}`;
}

const sandbox = await startSandbox({
  latencyMs,
  processingMs,
  processingSpreadMs: processingMaxMs - processingMs,
  retainPayloads,
  recordRequests: false,
  seed: 1,
  // The bench export's transactions are dated in that period's month, whatever month the bench runs in.
  openPeriodStart: PUSH_EXPORT_OPEN_PERIOD,
  // One call per finished request, with its duration: the arrival time is now minus the duration.
  log: (line) => {
    const [method = '', path = '', , duration = ''] = line.split(' ');
    if (!path.startsWith('/v') || path.includes('graphql')) return;
    requests += 1;
    const arrived = Date.now() - Number.parseInt(duration, 10);
    if (firstAt === null || arrived < firstAt) firstAt = arrived;
    const key = endpointOf(method, path);
    byEndpoint[key] = (byEndpoint[key] ?? 0) + 1;
    const slot = Math.max(0, Math.floor((arrived - firstAt) / 500));
    while (timeline.length <= slot) timeline.push({});
    const bucket = timeline[slot] ?? {};
    bucket[key] = (bucket[key] ?? 0) + 1;
  },
});
process.stdout.write(`${JSON.stringify({ url: sandbox.url, apiKey: sandbox.apiKey })}\n`);
const commands = createInterface({ input: process.stdin });
commands.on('line', (command) => {
  if (command === 'stats') {
    const { user, system } = process.cpuUsage();
    const cpuMicros = user + system;
    process.stdout.write(`${JSON.stringify({ requests, firstAt, byEndpoint, timeline, cpuMicros })}\n`);
  }
  if (command === 'reset') {
    requests = 0;
    firstAt = null;
    byEndpoint = {};
    timeline = [];
    process.stdout.write('{}\n');
  }
});
commands.on('close', () => {
  void sandbox.close().then(() => process.exit(0));
});

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_ENGINE_SETTINGS, nullSink, runPush } from '../../src/engine/index.js';
import { Ledger } from '../../src/ledger/index.js';
import { accountEntry, stream } from '../../test/engine/build.js';
import { FakeService } from '../../test/engine/fake-service.js';

const latency = Number(process.argv[2] ?? 20);
for (const concurrency of (process.env.C ? [Number(process.env.C)] : [8, 32, 128])) {
  const service = new FakeService();
  service.pollsToSettle = 1;
  const orig = (service as any).createAccount;
  let busy = 0; const wrap = (name: string) => { const f = (service as any)[name]; (service as any)[name] = async (...a: unknown[]) => { const s = performance.now(); await new Promise(r => setTimeout(r, latency)); try { return await f(...a); } finally { busy += performance.now() - s; } }; };
  for (const n of ['createAccount', 'getImportStatus', 'createNotes', 'listImportedAccounts']) wrap(n);
  void orig;
  const bound = concurrency / (latency / 1000 * 3);
  const n = Math.ceil(bound * 6);
  const dir = mkdtempSync(join(tmpdir(), 'qb-'));
  const ledger = Ledger.open(dir);
  ledger.startRun('push', {});
  const entries = Array.from({ length: n }, (_, i) => accountEntry({ number: `A-${i}`, notes: ['x'] }));
  let t0 = 0;
  const sink = { emit: (e: any) => { if (e.type === 'plan') t0 = Date.now(); } };
  const r = await runPush({ ledger, client: service, settings: { ...DEFAULT_ENGINE_SETTINGS, concurrency, pollSchedule: { firstDelayMs: 200, factor: 2, maxDelayMs: 2000, jitter: 0.2 } }, sink, entries: stream(entries) });
  const secs = (Date.now() - t0) / 1000;
  ledger.close();
  console.log({ concurrency, n, reason: r.reason, rate: (n / secs).toFixed(0), bound: bound.toFixed(0), share: (n / secs / bound).toFixed(2), reqPerAcct: (service.calls.length / n).toFixed(2), maxInFlight: service.maxInFlight, util: (busy / (secs * 1000 * concurrency)).toFixed(2), perReq: (busy / service.calls.length).toFixed(1) });
}

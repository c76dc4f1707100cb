import { describePhase, nth } from './signal-tries.js';

// SIGTERM/SIGINT while every account is created and waits for the service's processing, polled (processing slower
// than the run): test/e2e/signal-tries.ts.
const ACCOUNTS = 6;
describePhase('accounts wait for processing', {
  prefix: 'P',
  accounts: ACCOUNTS,
  processingMs: 1500,
  when: () => nth(ACCOUNTS, (line) => line['event'] === 'account' && line['outcome'] === 'scheduled'),
});

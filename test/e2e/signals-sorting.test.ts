import { describePhase, outOfOrder } from './signal-tries.js';

// SIGTERM/SIGINT while files out of order are sorted on disk before anything is sent: test/e2e/signal-tries.ts.
describePhase('files out of order are sorted', {
  prefix: 'S',
  when: () => (line) => line['event'] === 'sorting',
  shape: outOfOrder,
});

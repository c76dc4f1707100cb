import { describePhase, type LogLine } from './signal-tries.js';

// SIGTERM/SIGINT while requests are in flight: a create, or (odd pairs of tries) records: test/e2e/signal-tries.ts.
describePhase('requests are sent', {
  prefix: 'R',
  when: (index) =>
    index % 4 < 2
      ? (line: LogLine) => line['event'] === 'account' && line['outcome'] === 'creating'
      : (line: LogLine) => line['event'] === 'items',
});

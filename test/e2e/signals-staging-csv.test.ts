import { describePhase, reading } from './signal-tries.js';

// SIGTERM/SIGINT while a CSV export is staged (streamed through the merge join): test/e2e/signal-tries.ts.
describePhase('a CSV export is staged', { prefix: 'C', when: reading });

import { describePhase, notesAs, reading } from './signal-tries.js';

// SIGTERM/SIGINT while an export with a JSON file is staged whole (the scratch join): test/e2e/signal-tries.ts.
describePhase('a JSON export is staged', { prefix: 'J', when: reading, shape: notesAs('json') });

import { describePhase, notesAs, reading } from './signal-tries.js';

// SIGTERM/SIGINT while an export with an NDJSON file is staged whole (the scratch join): test/e2e/signal-tries.ts.
describePhase('an NDJSON export is staged', { prefix: 'N', when: reading, shape: notesAs('ndjson') });

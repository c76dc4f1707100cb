#!/usr/bin/env node
// The `migrate` command: runs the compiled CLI (npm ci builds dist/ through the prepare script).
import { keepHeapNearLiveData } from '../dist/cli/heap.js';
import { main } from '../dist/cli/main.js';

keepHeapNearLiveData();
main(process.argv).then((code) => {
  process.exitCode = code;
});

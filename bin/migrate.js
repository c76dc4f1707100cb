#!/usr/bin/env node
// The `migrate` command: runs the compiled CLI (npm ci builds dist/ through the prepare script).
import { main } from '../dist/cli/main.js';

main(process.argv).then((code) => {
  process.exitCode = code;
});

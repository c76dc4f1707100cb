// Every command of a cohort says first which run configuration it read and which service it talks to (one line on
// stderr, stamped unless MIGRATE_TIMESTAMPS=0; test/cli/run-origin.test.ts tests it). Tests of what a command says
// after that line read stderr without it, through this: a line of another form is left where it is.

const ORIGIN_LINE =
  /^(\d{4}-\d\d-\d\dT[\d:.]+Z run - )?migrate: run configuration .*; (service[ :].*|no service contacted)\n/;

/** `stderr` without the run's first line (which run configuration, which service), when it starts with one. */
export function afterOriginLine(stderr: string): string {
  return stderr.replace(ORIGIN_LINE, '');
}

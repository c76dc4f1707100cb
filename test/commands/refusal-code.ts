import { MigrateError } from '../../src/errors.js';

/** The code of the error a resolve refuses with (undefined: it resolved). */
export function refusalCode(run: () => unknown): string | undefined {
  try {
    run();
    return undefined;
  } catch (error) {
    return error instanceof MigrateError ? error.code : String(error);
  }
}

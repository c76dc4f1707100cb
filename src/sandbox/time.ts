// Times in the service's answers.

/**
 * Datetimes as the real platform writes them: microseconds and a UTC offset (docs/service.md "Field names on the real
 * platform").
 */
export function isoWithOffset(ms: number): string {
  const iso = new Date(Math.floor(ms)).toISOString();
  return `${iso.slice(0, 23)}000+00:00`;
}

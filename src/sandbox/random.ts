// Seeded randomness. Per-account choices (account number, errored share) hash the seed with the
// account's pair, so they do not depend on the order in which concurrent requests arrive;
// per-request choices (faults, jitter) draw from seeded streams in arrival order.

/** cyrb53: a fast 53-bit string hash (public domain), seeded. */
export function hash53(text: string, seed: number): number {
  let h1 = 0xdeadbeef ^ seed;
  let h2 = 0x41c6ce57 ^ seed;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507);
  h1 ^= Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507);
  h2 ^= Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

/** A uniform number in [0, 1) fixed by the seed and the parts. */
export function hashShare(seed: number, ...parts: Array<string | number>): number {
  return hash53(parts.join('\u0000'), seed) / 2 ** 53;
}

/** mulberry32: a small seeded stream of uniform numbers in [0, 1). */
export function seededStream(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * `A-` + 8 upper-case hex digits (the platform's account number format, docs/service.md "Field names on the real
 * platform").
 */
export function formatAccountNumber(value: number): string {
  return `A-${(value >>> 0).toString(16).toUpperCase().padStart(8, '0')}`;
}

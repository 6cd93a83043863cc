/** A small seeded PRNG (mulberry32) so generated and fuzzed inputs reproduce from their seed. */
export function rng(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (min: number, max: number) => min + Math.floor(next() * (max - min + 1)),
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!,
    bytes: (n: number) => Uint8Array.from({ length: n }, () => Math.floor(next() * 256)),
    string: (n: number, alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789/?=&%{}[]":,.-_ \n\u00e9\u{1F600}') =>
      Array.from({ length: n }, () => alphabet[Math.floor(next() * alphabet.length)]).join(""),
  };
}

/**
 * mulberry32: tiny, fast, good enough for randomised search. A seeded generator (never
 * Math.random) so that the same seed gives byte-identical output.
 */
export type Rng = () => number;

/** Returns a generator of unsigned 32-bit integers. */
export function mulberry32(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

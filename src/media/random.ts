/**
 * Seeded randomness shared by the synthesis pipelines (outpaint, scenes, loops). mulberry32 is
 * tiny, fast and good enough for randomised search and procedural noise; never Math.random, so
 * the same seed gives byte-identical output.
 */

/** A seeded generator. */
export type Rng = () => number;

/** Unsigned 32-bit integers. */
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

/** Uniform floats in [0, 1). */
export function seededRandom(seed: number): () => number {
  const next = mulberry32(seed);
  return () => next() / 4294967296;
}

// Shared by the outline tests: how straight a traced edge is.

/** The least-squares line x = mx + slope (y - my) through points (xs[i], ys[i]), and the largest distance in x of a point from it. */
export function fitLine(ys: number[], xs: number[]): { slope: number; worst: number } {
  const my = ys.reduce((a, v) => a + v, 0) / ys.length,
    mx = xs.reduce((a, v) => a + v, 0) / xs.length;
  let num = 0,
    den = 0;
  for (let i = 0; i < ys.length; i++) {
    num += (ys[i]! - my) * (xs[i]! - mx);
    den += (ys[i]! - my) ** 2;
  }
  const slope = num / den;
  return { slope, worst: Math.max(...ys.map((y, i) => Math.abs(xs[i]! - (mx + slope * (y - my))))) };
}

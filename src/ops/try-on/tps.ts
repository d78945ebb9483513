/**
 * Thin-plate spline in 2-D (Bookstein 1989): f(p) = a0 + a1 x + a2 y + sum_i w_i U(|p - c_i|),
 * U(r) = r^2 log r^2, one spline per output coordinate. `lambda` > 0 relaxes exact
 * interpolation so noisy landmarks bend the garment smoothly instead of folding it.
 */

export interface Pair {
  from: { x: number; y: number };
  to: { x: number; y: number };
}

export interface Tps {
  map(x: number, y: number): [number, number];
}

function kernel(r2: number): number {
  return r2 <= 1e-12 ? 0 : r2 * Math.log(r2);
}

/** Solves A x = b in place by Gaussian elimination with partial pivoting. */
function solve(A: Float64Array[], b: Float64Array): Float64Array {
  const n = b.length;
  for (let c = 0; c < n; c++) {
    let p = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(A[r]![c]!) > Math.abs(A[p]![c]!)) p = r;
    [A[c], A[p]] = [A[p]!, A[c]!];
    [b[c], b[p]] = [b[p]!, b[c]!];
    const piv = A[c]![c]!;
    if (Math.abs(piv) < 1e-12) throw new Error('singular thin-plate system (duplicate landmarks?)');
    for (let r = c + 1; r < n; r++) {
      const f = A[r]![c]! / piv;
      if (!f) continue;
      for (let k = c; k < n; k++) A[r]![k]! -= f * A[c]![k]!;
      b[r]! -= f * b[c]!;
    }
  }
  const x = new Float64Array(n);
  for (let r = n - 1; r >= 0; r--) {
    let s = b[r]!;
    for (let k = r + 1; k < n; k++) s -= A[r]![k]! * x[k]!;
    x[r] = s / A[r]![r]!;
  }
  return x;
}

/**
 * Fits a spline mapping each pair's `from` to its `to`. Coordinates are normalised by `scale`
 * (e.g. the image diagonal) so lambda means the same at any resolution.
 */
export function fitTps(pairs: Pair[], scale: number, lambda = 0.002): Tps {
  const n = pairs.length;
  const s = 1 / scale;
  const px = pairs.map((p) => p.from.x * s),
    py = pairs.map((p) => p.from.y * s);
  const build = () => {
    const A: Float64Array[] = [];
    for (let i = 0; i < n + 3; i++) A.push(new Float64Array(n + 3));
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) A[i]![j] = kernel((px[i]! - px[j]!) ** 2 + (py[i]! - py[j]!) ** 2) + (i === j ? lambda : 0);
      A[i]![n] = 1;
      A[i]![n + 1] = px[i]!;
      A[i]![n + 2] = py[i]!;
      A[n]![i] = 1;
      A[n + 1]![i] = px[i]!;
      A[n + 2]![i] = py[i]!;
    }
    return A;
  };
  const bx = new Float64Array(n + 3),
    by = new Float64Array(n + 3);
  pairs.forEach((p, i) => {
    bx[i] = p.to.x * s;
    by[i] = p.to.y * s;
  });
  const cxs = solve(build(), bx);
  const cys = solve(build(), by);
  return {
    map(x: number, y: number): [number, number] {
      const qx = x * s,
        qy = y * s;
      let fx = cxs[n]! + cxs[n + 1]! * qx + cxs[n + 2]! * qy;
      let fy = cys[n]! + cys[n + 1]! * qx + cys[n + 2]! * qy;
      for (let i = 0; i < n; i++) {
        const u = kernel((qx - px[i]!) ** 2 + (qy - py[i]!) ** 2);
        fx += cxs[i]! * u;
        fy += cys[i]! * u;
      }
      return [fx * scale, fy * scale];
    },
  };
}

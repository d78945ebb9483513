/**
 * Smooth value noise in 0..1 sampled on a gw x gh grid, with lattice spacing `scale` nodes:
 * random values on a coarse lattice, interpolated with a smoothstep so it has no creases.
 */
export function valueNoise(gw: number, gh: number, scale: number, rand: () => number): Float32Array {
  const lw = Math.ceil(gw / scale) + 2,
    lh = Math.ceil(gh / scale) + 2;
  const lattice = new Float32Array(lw * lh);
  for (let i = 0; i < lattice.length; i++) lattice[i] = rand();
  const out = new Float32Array(gw * gh);
  for (let y = 0; y < gh; y++) {
    const ly = y / scale,
      y0 = Math.floor(ly);
    let ty = ly - y0;
    ty = ty * ty * (3 - 2 * ty);
    for (let x = 0; x < gw; x++) {
      const lx = x / scale,
        x0 = Math.floor(lx);
      let tx = lx - x0;
      tx = tx * tx * (3 - 2 * tx);
      const a = lattice[y0 * lw + x0]!,
        b = lattice[y0 * lw + x0 + 1]!;
      const c = lattice[(y0 + 1) * lw + x0]!,
        d = lattice[(y0 + 1) * lw + x0 + 1]!;
      out[y * gw + x] = (a * (1 - tx) + b * tx) * (1 - ty) + (c * (1 - tx) + d * tx) * ty;
    }
  }
  return out;
}

/** Mean of a w x h mask over the pixels `keep` selects (the synthetic cut-out tests' probe). */
export function meanWhere(m: Uint8Array, w: number, h: number, keep: (x: number, y: number) => boolean): number {
  let s = 0,
    k = 0;
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++)
      if (keep(x, y)) {
        s += m[y * w + x]!;
        k++;
      }
  return s / k;
}

/**
 * Small disconnected pieces of a drawn garment layer (a sleeve tip cut off by the person's
 * outline, a sliver of the body warp between an arm and the torso) read as debris: only the
 * layer's pieces of at least `minShare` of its largest piece are kept.
 */

/**
 * 0/1 per pixel of a `width` x `height` coverage (any value > 0 counts as covered): 1 where the
 * pixel belongs to a 4-connected piece of at least `minShare` of the largest piece's area.
 */
export function keepLargePieces(cover: Float32Array, width: number, height: number, minShare = 0.02): Uint8Array {
  const n = width * height;
  const label = new Int32Array(n).fill(-1);
  const sizes: number[] = [];
  const stack = new Int32Array(n);
  for (let s = 0; s < n; s++) {
    if (!(cover[s]! > 0) || label[s] !== -1) continue;
    const id = sizes.length;
    let top = 0,
      size = 0;
    stack[top++] = s;
    label[s] = id;
    while (top) {
      const i = stack[--top]!;
      size++;
      const x = i % width;
      const push = (j: number) => {
        if (label[j] === -1 && cover[j]! > 0) {
          label[j] = id;
          stack[top++] = j;
        }
      };
      if (x > 0) push(i - 1);
      if (x < width - 1) push(i + 1);
      if (i >= width) push(i - width);
      if (i < n - width) push(i + width);
    }
    sizes.push(size);
  }
  const largest = sizes.reduce((a, b) => Math.max(a, b), 0);
  const keep = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const id = label[i]!;
    if (id >= 0 && sizes[id]! >= minShare * largest) keep[i] = 1;
  }
  return keep;
}

import type { Rng } from '../../media/random.js';
import type { Field, SearchParams } from './patchmatch.js';
import type { Level } from './pyramid.js';

/**
 * Starting guess at the coarsest scale by onion-peel texture synthesis (Efros and Leung 1999;
 * the usual start of exemplar-based completion, Criminisi et al. 2004): the band is filled ring
 * by ring outwards from the original, each pixel copied from the centre of the source patch that
 * best matches what is already there around it (original pixels and the rings filled before),
 * under the same source costs as the EM search (subject, distinctness, detail, window).
 *
 * Why: the former start, a local average of the original that grows wider with depth, is a
 * blur. EM compares target patches with that estimate, and a smooth estimate is matched best by
 * flat sources, so the coarsest scale settled on plain backdrop wherever the picture had a choice
 * and the band's detail was lost for good (bench/outpaint-stages.mjs). A start made of copied
 * pixels is as busy as the picture, made of many sources (each pixel picks its own), and already
 * carries the structures that cross the border outwards; EM then only has to make it coherent.
 *
 * Returns, for every band pixel, the source patch centre it was copied from (written into the
 * field `F` for the band targets, so that EM starts from this layout rather than a random one).
 */
export function onionPeel(L: Level, F: Field, p: SearchParams, rng: Rng, knownWeight: number): void {
  const { w, h, img } = L;
  const r = p.r;
  const sx0 = L.kx0 + r,
    sx1 = L.kx1 - 1 - r,
    sy0 = L.ky0 + r,
    sy1 = L.ky1 - 1 - r;
  if (sx1 < sx0 || sy1 < sy0) return;
  const depthOf = (x: number, y: number) => {
    const dx = x < L.kx0 ? L.kx0 - x : x >= L.kx1 ? x - L.kx1 + 1 : 0;
    const dy = y < L.ky0 ? L.ky0 - y : y >= L.ky1 ? y - L.ky1 + 1 : 0;
    return dx > dy ? dx : dy;
  };
  // 2 = original, 1 = filled band pixel, 0 = not yet.
  const state = new Uint8Array(w * h);
  for (let y = L.ky0; y < L.ky1; y++) state.fill(2, y * w + L.kx0, y * w + L.kx1);
  const srcX = new Int32Array(w * h).fill(-1);
  const srcY = new Int32Array(w * h);
  const patchSize = 3 * (2 * r + 1) ** 2;
  // Pixels of each ring, in scan order.
  const maxDepth = Math.max(L.kx0, L.ky0, w - L.kx1, h - L.ky1);
  const rings: number[][] = Array.from({ length: maxDepth + 1 }, () => []);
  for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) if (state[y * w + x] === 0) rings[depthOf(x, y)]!.push(y * w + x);

  // Offsets of the patch, and per target the (offset, weight) pairs of its filled pixels.
  const offs: number[] = [];
  for (let dy = -r; dy <= r; dy++) for (let dx = -r; dx <= r; dx++) offs.push(dx, dy);
  const mx = new Int32Array(offs.length / 2);
  const my = new Int32Array(offs.length / 2);
  const mw = new Float32Array(offs.length / 2);

  for (let d = 1; d <= maxDepth; d++) {
    const ring = rings[d]!;
    for (let k = 0; k < ring.length; k++) {
      const t = ring[k]!;
      const tx = t % w,
        ty = (t - tx) / w;
      // The filled part of the target patch.
      let n = 0;
      let wsum = 0;
      for (let o = 0; o < offs.length; o += 2) {
        const x = tx + offs[o]!,
          y = ty + offs[o + 1]!;
        if (x < 0 || y < 0 || x >= w || y >= h) continue;
        const s = state[y * w + x]!;
        if (s === 0) continue;
        mx[n] = offs[o]!;
        my[n] = offs[o + 1]!;
        mw[n] = s === 2 ? knownWeight : 1;
        wsum += mw[n]!;
        n++;
      }
      const qx = Math.min(L.kx1 - 1, Math.max(L.kx0, tx)),
        qy = Math.min(L.ky1 - 1, Math.max(L.ky0, ty));
      const lx = Math.max(sx0, qx - p.window),
        hx = Math.min(sx1, qx + p.window),
        ly = Math.max(sy0, qy - p.window),
        hy = Math.min(sy1, qy + p.window);
      // Source costs, scaled to the share of the patch that is compared.
      const scale = wsum / (2 * r + 1) ** 2;
      const out = d;
      const uniq = p.distinct ? Math.min(1, out / p.distinct.depth) * p.distinct.cost * patchSize * scale : 0;
      const subj = p.salient ? Math.min(1, out / p.salient.depth) * p.salient.cost * patchSize * scale : 0;
      const want = p.detail ? p.detail.want[t]! : 0;
      const dCost = p.detail ? p.detail.cost * patchSize * scale : 0;
      const penalty = (cx: number, cy: number) => {
        const c = cy * w + cx;
        let pen = 0;
        if (uniq > 0) pen += uniq * p.distinct!.map[c]!;
        if (subj > 0) pen += subj * p.salient!.map[c]!;
        if (dCost > 0) {
          const dd = p.detail!.source[c]! - want;
          pen += dCost * dd * dd;
        }
        return pen;
      };
      let bx = -1,
        by = -1,
        bc = Infinity;
      const consider = (cx: number, cy: number) => {
        if (cx < lx || cx > hx || cy < ly || cy > hy) return;
        let sum = penalty(cx, cy);
        if (sum >= bc) return;
        for (let j = 0; j < n; j++) {
          const ti = ((ty + my[j]!) * w + tx + mx[j]!) * 3;
          const si = ((cy + my[j]!) * w + cx + mx[j]!) * 3;
          const a = img[ti]! - img[si]!,
            b = img[ti + 1]! - img[si + 1]!,
            c = img[ti + 2]! - img[si + 2]!;
          sum += mw[j]! * (a * a + b * b + c * c);
          if (sum >= bc) return;
        }
        bc = sum;
        bx = cx;
        by = cy;
      };
      // Coherent candidates: the filled neighbours' sources, shifted.
      for (let oy = -1; oy <= 1; oy++)
        for (let ox = -1; ox <= 1; ox++) {
          const x = tx + ox,
            y = ty + oy;
          if ((ox === 0 && oy === 0) || x < 0 || y < 0 || x >= w || y >= h) continue;
          const q = y * w + x;
          if (state[q] === 1 && srcX[q]! >= 0) consider(srcX[q]! - ox, srcY[q]! - oy);
        }
      // Random candidates in the window, then a random search around the best.
      for (let j = 0; j < 24; j++) consider(lx + (rng() % (hx - lx + 1)), ly + (rng() % (hy - ly + 1)));
      for (let rad = Math.max(hx - lx, hy - ly) >> 1; rad >= 1; rad >>= 1) {
        for (let j = 0; j < 2; j++) consider(bx - rad + (rng() % (2 * rad + 1)), by - rad + (rng() % (2 * rad + 1)));
      }
      if (bx < 0) continue;
      const di = t * 3,
        si = (by * w + bx) * 3;
      img[di] = img[si]!;
      img[di + 1] = img[si + 1]!;
      img[di + 2] = img[si + 2]!;
      state[t] = 1;
      srcX[t] = bx;
      srcY[t] = by;
    }
  }
  // EM starts from this layout for the band targets.
  for (let i = 0; i < F.targets.length; i++) {
    const t = F.targets[i]!;
    if (srcX[t]! >= 0) {
      F.sx[t] = srcX[t]!;
      F.sy[t] = srcY[t]!;
    }
  }
}

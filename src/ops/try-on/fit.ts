import type { BodyGeometry, Point } from './body.js';
import type { Garment } from './garment.js';
import { clamp } from './raster.js';
import { fitTps, type Pair, type Tps } from './tps.js';

/**
 * Landmark correspondences from the garment to the body (both in full-resolution person
 * pixels for the body, garment-crop pixels for the garment), and the thin-plate warp built on
 * them. One horizontal scale s (garment shoulders/chest/waistband to the body's) sets sizes;
 * vertical positions below the reference row keep the garment's proportions (y scaled by s),
 * while the sides are pulled out to the body's torso sides so the garment never ends up
 * narrower than the person under it, and sleeves are rotated towards the arms.
 */

export interface Fit {
  pairs: Pair[];
  /** Maps a person pixel to the garment crop pixel it shows. */
  inverse: Tps;
  forward: Tps;
  scale: number;
}

function rotate(v: Point, a: number): Point {
  const c = Math.cos(a),
    s = Math.sin(a);
  return { x: v.x * c - v.y * s, y: v.x * s + v.y * c };
}

export function fitGarment(g: Garment, b: BodyGeometry, k: number): Fit {
  // Body geometry is measured at working scale; k converts it to full-resolution pixels.
  const cx = b.cx * k;
  const sideL = (y: number) => b.sideL[Math.round(clamp(y / k, 0, b.height - 1))]! * k;
  const sideR = (y: number) => b.sideR[Math.round(clamp(y / k, 0, b.height - 1))]! * k;
  const lm = g.landmarks;
  const pairs: Pair[] = [];
  const add = (from: Point, to: Point) => pairs.push({ from, to });
  const sw = b.shoulderW * k;

  // Keeps a garment row's sides at least as wide as the torso there (with a little ease).
  const side = (gx: number, y: number, s: number, which: -1 | 1) => {
    const half = Math.abs(gx - lm.cx) * s;
    const body = which < 0 ? cx - sideL(y) : sideR(y) - cx;
    return cx + which * Math.max(half, 1.03 * body);
  };

  let s: number;
  let refG: number, refP: number;
  if (g.kind === 'top') {
    const gShoulder = Math.max(1, lm.shoulderR.x - lm.shoulderL.x);
    const pShoulderL = { x: b.shoulderL.x * k, y: b.shoulderL.y * k };
    const pShoulderR = { x: b.shoulderR.x * k, y: b.shoulderR.y * k };
    s = (pShoulderR.x - pShoulderL.x) / gShoulder;
    refG = (lm.shoulderL.y + lm.shoulderR.y) / 2;
    refP = (pShoulderL.y + pShoulderR.y) / 2;
    // Big sleeves put a garment's armpit far down; a worn sleeve is lifted by the arm, so the
    // armpit row goes to at most half a unit below the body's armpit, and the span above it
    // (sleeves included) is compressed by the same factor fy.
    const U = ((b.headH + b.shoulderW / 2) / 2) * k;
    const chestProp = refP + (lm.chestY - refG) * s;
    const chestP = clamp(chestProp, b.armpitY * k, b.armpitY * k + 0.5 * U);
    const fy = clamp((chestP - refP) / Math.max(1, chestProp - refP), 0.3, 1.5);
    const Y = (gy: number) => (gy <= lm.chestY ? refP + (gy - refG) * s * fy : chestP + (gy - lm.chestY) * s);
    add(lm.neck, { x: cx, y: Math.min(b.neckY * k, Y(lm.neck.y)) });
    add(lm.shoulderL, pShoulderL);
    add(lm.shoulderR, pShoulderR);
    // Sides pinned at the armpits, the hem and two rows between, so a lowered sleeve cannot
    // drag the body's side in with it.
    const rowsG: [number, number, number][] = [[lm.chestY, lm.chestL, lm.chestR]];
    for (const t of [1 / 3, 2 / 3]) {
      const gy = Math.round(lm.chestY + t * (lm.hemY - lm.chestY));
      const run = g.mask.data.subarray(gy * g.mask.width, (gy + 1) * g.mask.width);
      const l = run.indexOf(1),
        r = run.lastIndexOf(1);
      if (l >= 0) rowsG.push([gy, l, r]);
    }
    rowsG.push([lm.hemY, lm.hemL, lm.hemR]);
    for (const [gy, gl, gr] of rowsG) {
      const y = Y(gy);
      add({ x: gl, y: gy }, { x: side(gl, y, s, -1), y });
      add({ x: gr, y: gy }, { x: side(gr, y, s, 1), y });
      add({ x: lm.cx, y: gy }, { x: cx, y });
    }
    const arms = [
      [lm.sleeveL, lm.shoulderL, pShoulderL, b.armL, -1],
      [lm.sleeveR, lm.shoulderR, pShoulderR, b.armR, 1],
    ] as const;
    for (const [sleeve, gS, pS, arm, dir] of arms) {
      if (!sleeve) continue;
      const vTip = { x: (sleeve.tip.x - gS.x) * s, y: (sleeve.tip.y - gS.y) * s * fy };
      const vCuff = { x: (sleeve.cuff.x - gS.x) * s, y: (sleeve.cuff.y - gS.y) * s * fy };
      let a = 0;
      if (arm) {
        // Rotate the sleeve so its outer edge runs along the arm's outer contour.
        const target = Math.atan2(arm.y * k - pS.y, arm.x * k - pS.x);
        const current = Math.atan2(vTip.y, vTip.x);
        let d = target - current;
        while (d > Math.PI) d -= 2 * Math.PI;
        while (d < -Math.PI) d += 2 * Math.PI;
        // Only lower sleeves towards hanging arms, and only part-way (35 degrees at most):
        // a sleeve folded flat against the body would fold the spline over itself.
        a = dir < 0 ? clamp(d, -0.6, 0) : clamp(d, 0, 0.6);
      }
      const t = rotate(vTip, a),
        c = rotate(vCuff, a);
      add(sleeve.tip, { x: pS.x + t.x, y: pS.y + t.y });
      add(sleeve.cuff, { x: pS.x + c.x, y: pS.y + c.y });
    }
  } else if (g.kind === 'full') {
    // A dress: bodice width to the chest, bodice top to the armpit line, waist to the waist.
    const chestHalf = Math.max(cx - sideL(b.armpitY * k), sideR(b.armpitY * k) - cx);
    s = (2 * chestHalf * 1.05) / Math.max(1, lm.chestR - lm.chestL);
    refG = lm.chestY;
    refP = b.armpitY * k;
    const Y = (gy: number) => refP + (gy - refG) * s;
    const yTop = Y(lm.neck.y);
    add(lm.neck, { x: cx, y: yTop });
    for (const sh of [lm.shoulderL, lm.shoulderR]) {
      // Straps end on the shoulder slope, from the neck base out to the shoulder point.
      const x = cx + (sh.x - lm.cx) * s;
      const f = clamp(Math.abs(x - cx) / (sw / 2), 0, 1);
      add(sh, { x, y: b.neckY * k + f * (b.shoulderY * k - b.neckY * k) });
    }
    const waistP = b.waistY * k;
    const sv = Math.max(0.6 * s, Math.min(1.6 * s, (waistP - refP) / Math.max(1, lm.waistY - refG)));
    const Yb = (gy: number) => (gy <= lm.waistY ? refP + (gy - refG) * ((waistP - refP) / Math.max(1, lm.waistY - refG)) : waistP + (gy - lm.waistY) * sv);
    for (const [gy, gl, gr] of [
      [lm.chestY, lm.chestL, lm.chestR],
      [lm.waistY, lm.waistL, lm.waistR],
      [lm.hemY, lm.hemL, lm.hemR],
    ] as const) {
      const y = gy === lm.chestY ? refP : Yb(gy);
      add({ x: gl, y: gy }, { x: side(gl, y, s, -1), y });
      add({ x: gr, y: gy }, { x: side(gr, y, s, 1), y });
      add({ x: lm.cx, y: gy }, { x: cx, y });
    }
  } else {
    // A bottom: waistband to the waist, then the garment's own proportions.
    const waistHalf = Math.max(cx - sideL(b.waistY * k), sideR(b.waistY * k) - cx);
    s = (2 * waistHalf * 1.05) / Math.max(1, lm.chestR - lm.chestL);
    refG = lm.chestY;
    refP = b.waistY * k;
    const Y = (gy: number) => refP + (gy - refG) * s;
    for (const [gy, gl, gr] of [
      [lm.chestY, lm.chestL, lm.chestR],
      [lm.hemY, lm.hemL, lm.hemR],
    ] as const) {
      const y = Y(gy);
      add({ x: gl, y: gy }, { x: side(gl, y, s, -1), y });
      add({ x: gr, y: gy }, { x: side(gr, y, s, 1), y });
      add({ x: lm.cx, y: gy }, { x: cx, y });
    }
  }
  const scaleNorm = Math.hypot(b.width * k, b.height * k);
  const forward = fitTps(pairs, scaleNorm);
  const inverse = fitTps(
    pairs.map((p) => ({ from: p.to, to: p.from })),
    scaleNorm,
  );
  return { pairs, inverse, forward, scale: s };
}

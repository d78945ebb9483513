import type { BodyGeometry, Point } from './body.js';
import { inHead } from './head.js';
import type { UpperArm } from './pose.js';
import { plane, type Plane } from './raster.js';

/** Shoulder widths around the shoulder -> elbow bone: the upper arm's sleeve zone. */
export const UPPER_ARM_REACH = 0.2;

function segDist(p: Point, q: Point, x: number, y: number): { d: number; t: number } {
  const dx = q.x - p.x,
    dy = q.y - p.y;
  const t = ((x - p.x) * dx + (y - p.y) * dy) / Math.max(1e-6, dx * dx + dy * dy);
  const c = Math.min(1, Math.max(0, t));
  return { d: Math.hypot(x - p.x - c * dx, y - p.y - c * dy), t };
}

/**
 * Working-scale 0/1: what the fill band must not cover. The occluder keeps everything above the
 * neck row in the head's columns in front: the head and hair, but also the old clothing's
 * collar and shoulder tops beside the neck, which showed above the new garment (and a red
 * jersey's collar passes the skin rule). Below the mouth row outside the head shape (head.ts:
 * it narrows to the chin, so the collar corners beside the chin are outside it) and down to
 * just under the shoulder line, in the head's columns (the face box and half its width either
 * side), only the neck (0.17 shoulder widths either side of the face's centre), forearms and
 * hands block the band.
 * On an upper arm (within UPPER_ARM_REACH shoulder widths of the shoulder -> elbow bone, short of
 * the elbow and off the forearm) only skin, the head shape, forearms, hands and, above the
 * shoulder joints' line in the head's columns, hair block it: the silhouette analysis also puts
 * dark or skin-toned blobs near an arm bone in front (messi5.jpg: the shadowed underside of the
 * raised arm's jersey sleeve, near black), and the old sleeve showed there as streaks along the
 * new sleeve's edge and end. Everywhere else the whole occluder does.
 */
export function fillBlocked(body: BodyGeometry, forearms: Plane, arms: UpperArm[] = []): Plane {
  const f = body.face;
  const { width: w, height: h } = body;
  const out = new Uint8Array(w * h);
  const head = body.head;
  const top = f ? (head ? head.mouthY : f.y1) : 0,
    fw = f ? f.x1 - f.x0 : 0,
    neckX = f ? (f.x0 + f.x1) / 2 : 0;
  const collarEnd = body.shoulderY + 0.15 * body.shoulderW;
  const neckHalf = 0.17 * body.shoulderW;
  const { shoulderL: a, shoulderR: b } = body;
  const slope = (b.y - a.y) / Math.max(1e-6, b.x - a.x);
  const headColumn = (x: number) => !!f && x >= f.x0 - 0.5 * fw && x <= f.x1 + 0.5 * fw;
  const onUpperArm = (x: number, y: number) =>
    arms.some((arm) => {
      const sw = body.shoulderW;
      const up = segDist(arm.shoulder, arm.elbow, x, y);
      if (up.d > UPPER_ARM_REACH * sw || up.t > 0.95) return false;
      return !arm.wrist || segDist(arm.elbow, arm.wrist, x, y).d > 0.15 * sw;
    });
  for (let i = 0; i < w * h; i++) {
    if (!body.occluder.data[i]) continue;
    const x = i % w,
      y = (i - x) / w;
    const limb = forearms.data[i] || body.hands?.data[i];
    if (!f) {
      out[i] = 1;
    } else {
      const collarZone = y > top && y <= collarEnd && headColumn(x) && !(head && inHead(head, x, y));
      out[i] = !collarZone || Math.abs(x - neckX) <= neckHalf || limb ? 1 : 0;
    }
    if (!out[i] || limb || body.skin.data[i] || (head && inHead(head, x, y))) continue;
    if (headColumn(x) && y <= a.y + slope * (x - a.x) - 0.05 * body.shoulderW) continue;
    if (onUpperArm(x, y)) out[i] = 0;
  }
  return plane(w, h, out);
}

/**
 * Working-scale weight 0..1: 0 in the neck's column (0.17 shoulder widths either side of the
 * face's middle) from the mouth row down to just under the shoulder line, where fillBlocked keeps
 * the neck in front, rising to 1 at 0.1 shoulder widths beyond the column's sides (no square
 * step at them). The fill band's pockets (fill-band.ts) are weighted by it: the neckline is drawn
 * by the garment and the band alone, the pockets do not grow the garment up the neck to the chin.
 */
export function outsideNeckColumn(body: BodyGeometry): (x: number, y: number) => number {
  const f = body.face;
  if (!f) return () => 1;
  const top = body.head ? body.head.mouthY : f.y1;
  const collarEnd = body.shoulderY + 0.15 * body.shoulderW;
  const neckHalf = 0.17 * body.shoulderW;
  const fade = 0.1 * body.shoulderW;
  const neckX = (f.x0 + f.x1) / 2;
  return (x, y) => {
    if (y <= top || y > collarEnd) return 1;
    const t = Math.min(1, Math.max(0, (Math.abs(x - neckX) - neckHalf) / fade));
    return t * t * (3 - 2 * t);
  };
}

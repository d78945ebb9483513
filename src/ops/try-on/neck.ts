import type { Point } from './body.js';
import { type HeadShape, inHead } from './head.js';
import { plane, type Plane } from './raster.js';

/** Shoulder widths either side of the neck's centre line: how wide the neck kept in front may be. */
export const NECK_HALF = 0.17;
/** Shoulder widths above the shoulder joints' line where the neck kept in front ends at the latest. */
export const NECK_BASE = 0.05;

/**
 * Working-scale 0/1: the neck as the photo shows it, kept in front of the garment. The
 * occluder keeps skin above the neck row (0.2 shoulder widths above the joints' line) and the
 * head shape (head.ts); below that row the garment covered everything, so a garment whose top
 * passes the neck row (shoulder seams raised to a bulky suit's shoulder top, apollo11_crew.jpg)
 * ended in a straight horizontal cut right under the chin, over the neck. The neck is the skin
 * joined to the head shape's skin below the mouth row, grown down through skin only: it stops
 * where the photo's own collar (or the neck ring of a suit) begins, so the garment meets the
 * neck along the outline the photo shows, not along a row. It stays within NECK_HALF shoulder
 * widths of the neck's centre line (from the head's centre at the chin to the shoulders'
 * middle at the base) and above the joints' line less NECK_BASE shoulder widths, so a bare
 * chest or an open collar does not take the garment's front with it.
 */
export function neckInFront(skin: Plane, sil: Plane, head: HeadShape, sl: Point, sr: Point, sw: number): Plane {
  const { width: w, height: h } = skin;
  const out = new Uint8Array(w * h);
  const slope = (sr.y - sl.y) / Math.max(1e-6, sr.x - sl.x);
  const headCx = (head.x0 + head.x1) / 2;
  const baseCx = (sl.x + sr.x) / 2,
    baseY = (sl.y + sr.y) / 2 - NECK_BASE * sw;
  const half = NECK_HALF * sw;
  const inZone = (x: number, y: number) => {
    if (y < head.mouthY || y > sl.y + slope * (x - sl.x) - NECK_BASE * sw) return false;
    const t = Math.min(1, Math.max(0, (y - head.chinY) / Math.max(1, baseY - head.chinY)));
    return Math.abs(x - (headCx + (baseCx - headCx) * t)) <= half;
  };
  const ok = (i: number) => !out[i] && skin.data[i] && sil.data[i];
  const stack: number[] = [];
  for (let y = Math.max(0, Math.ceil(head.mouthY)); y <= Math.min(h - 1, Math.floor(head.chinY)); y++) {
    for (let x = Math.max(0, Math.ceil(head.x0)); x <= Math.min(w - 1, Math.floor(head.x1)); x++) {
      const i = y * w + x;
      if (inHead(head, x, y) && inZone(x, y) && ok(i)) {
        out[i] = 1;
        stack.push(i);
      }
    }
  }
  while (stack.length) {
    const i = stack.pop()!;
    const x = i % w,
      y = (i - x) / w;
    for (const [nx, ny] of [
      [x - 1, y],
      [x + 1, y],
      [x, y - 1],
      [x, y + 1],
    ] as const) {
      if (nx < 0 || ny < 0 || nx >= w || ny >= h) continue;
      const j = ny * w + nx;
      if (ok(j) && inZone(nx, ny)) {
        out[j] = 1;
        stack.push(j);
      }
    }
  }
  // Row by row, the gaps between neck pixels (a shadow under the jaw, a beard's speckle) are neck too.
  for (let y = 0; y < h; y++) {
    let first = -1,
      last = -1;
    for (let x = 0; x < w; x++) {
      if (out[y * w + x]) {
        if (first < 0) first = x;
        last = x;
      }
    }
    for (let x = first + 1; first >= 0 && x < last; x++) if (sil.data[y * w + x]) out[y * w + x] = 1;
  }
  return plane(w, h, out);
}

import type { Person } from '../../../src/engine/people.js';
import type { BodyGeometry } from '../../../src/ops/try-on/body.js';
import { plane } from '../../../src/ops/try-on/raster.js';

/** A person pixel's colour and whether the skin rule passes it. */
export type ArmPixel = { c: readonly number[]; skin: boolean };

/**
 * A synthetic arm for the short-sleeve rules: a 200 x 100 picture, a horizontal arm along y = 50
 * from the shoulder joint at x = 20 through the elbow at x = 100 to the wrist at x = 180, on a
 * body with shoulders 100 px apart (the other arm unseen). `person(x, y)` paints the person's
 * pixels (columns 20..180 only; null elsewhere: background), `backdrop(x, y)` the rest. The
 * person's outline (`inPerson`) and silhouette are exactly its pixels.
 */
export function armScene(person: (x: number, y: number) => ArmPixel | null, backdrop: (x: number, y: number) => readonly number[]) {
  const w = 200,
    h = 100;
  const sil = plane(w, h),
    skin = plane(w, h);
  const rgb = new Uint8Array(w * h * 3);
  const inPerson = new Float32Array(w * h);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const i = y * w + x;
      const p = x >= 20 && x <= 180 ? person(x, y) : null;
      rgb.set(p ? p.c : backdrop(x, y), i * 3);
      if (!p) continue;
      sil.data[i] = 1;
      skin.data[i] = p.skin ? 1 : 0;
      inPerson[i] = 1;
    }
  }
  const body = { width: w, height: h, silhouette: sil, skin, shoulderW: 100 } as unknown as BodyGeometry;
  const landmarks = Array.from({ length: 33 }, () => ({ x: 0, y: 0, z: 0, visibility: 0 }));
  landmarks[11] = { x: 20, y: 50, z: 0, visibility: 1 };
  landmarks[13] = { x: 100, y: 50, z: 0, visibility: 1 };
  landmarks[15] = { x: 180, y: 50, z: 0, visibility: 1 };
  const subject = { landmarks } as unknown as Person;
  /** The RGB of `img` at (x, y). */
  const at = (img: Uint8Array, x: number, y: number) => [...img.subarray((y * w + x) * 3, (y * w + x) * 3 + 3)];
  return { w, h, rgb, inPerson, body, subject, at };
}

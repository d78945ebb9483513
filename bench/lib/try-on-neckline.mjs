// The garment's neckline opening (neckline.ts) warped and turned as try-on draws it, over the
// person image, for the neckline figures: this build's opening serves both builds' renders,
// so a before -> after row compares the same pixels. `root`: a build's directory (its dist/),
// or none for this checkout's.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

export async function neckOpenings(root) {
  const lay = await layouts(root);
  /** 0/1 over the person image: the warped opening (>= 128 of 255); null when the garment has none. */
  return async (gname, gbuf, subject, width, height) => {
    const g = await lay.garment(gname, gbuf);
    if (g.kind === 'bottom' || !g.opening) return null;
    const l = lay.layOnPose(g, subject, width, height).turned?.layer;
    if (!l?.opening) return null;
    const shape = new Uint8Array(width * height);
    for (let y = 0; y < l.height; y++) {
      for (let x = 0; x < l.width; x++) if (l.opening[y * l.width + x] >= 128 && l.alpha[y * l.width + x] >= 128) shape[(y + l.y0) * width + x + l.x0] = 1;
    }
    return shape;
  };
}

/**
 * What a dress without sleeves leaves as the photo shows it (all its own shape does not cover:
 * above its bodice, beside it), as this checkout's build lays it (layout.ts `uncovered`): 0/1
 * over the person image (at least half uncovered), or null for other garments. The old-clothing
 * figures leave it out: the garment's own design does not cover it.
 */
export async function dressUncovered() {
  const lay = await layouts();
  return async (gname, gbuf, subject, width, height) => {
    const g = await lay.garment(gname, gbuf);
    if (g.kind !== 'full') return null;
    const u = lay.layOnPose(g, subject, width, height).uncovered;
    return u ? Uint8Array.from(u.data, (v) => (v >= 128 ? 1 : 0)) : null;
  };
}

/** A build's garment preparation and layout (`root`: its directory, or none for this checkout's). */
async function layouts(root) {
  const base = root ? `${pathToFileURL(resolve(root, 'dist')).href}/` : new URL('../../dist/', import.meta.url).href;
  const [{ decodeImage }, { prepareGarment }, { tryOn }, { layOnPose }] = await Promise.all([
    import(`${base}media/image.js`),
    import(`${base}ops/try-on/garment.js`),
    import(`${base}ops/try-on/index.js`),
    import(`${base}ops/try-on/layout.js`),
  ]);
  return {
    layOnPose,
    garment: async (gname, gbuf) =>
      prepareGarment(await decodeImage({ name: gname, data: gbuf, size: gbuf.length }, tryOn.limits, tryOn.name), { preprocess: true }),
  };
}

/**
 * Share of the pixels set in `opening` (0/1, person-image size) changed in neither unlit render
 * (`flat`, `inv`: RGB bytes; the same render twice to judge one) by more than 24 levels from the
 * photo `ref`: the photo (the neck) shown through them. undefined when none is set.
 */
export function neckShownIn(opening, ref, flat, inv) {
  if (!opening) return undefined;
  let n = 0,
    shown = 0;
  for (let p = 0; p < opening.length; p++) {
    if (!opening[p]) continue;
    n++;
    let d = 0;
    for (let c = 0; c < 3; c++) d = Math.max(d, Math.abs(ref[p * 3 + c] - flat[p * 3 + c]), Math.abs(ref[p * 3 + c] - inv[p * 3 + c]));
    if (d <= 24) shown++;
  }
  return n ? shown / n : undefined;
}

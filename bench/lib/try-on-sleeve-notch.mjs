// The sleeves laid along the arms (sleeves.ts), alone: their drawn shape (alpha >= 128) for the
// notch figure (shapeNotch). In the finished render they lie over the torso warp's copy of the
// sleeve, so a step in their inner outline is a step between two garment colours, which the
// render's own outline (outlineNotch) cannot see (astronaut.png's coat: a square notch at the
// elbow). `root`: a build's directory (its dist/), or none for this checkout's.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

export async function sleeveShapes(root) {
  const base = root ? `${pathToFileURL(resolve(root, 'dist')).href}/` : new URL('../../dist/', import.meta.url).href;
  const [{ decodeImage }, { prepareGarment }, { tryOn }, { fitGarmentToPose }, { warpSleevesOnArms }] = await Promise.all([
    import(`${base}media/image.js`),
    import(`${base}ops/try-on/garment.js`),
    import(`${base}ops/try-on/index.js`),
    import(`${base}ops/try-on/fit-pose.js`),
    import(`${base}ops/try-on/sleeves.js`),
  ]);
  /** 0/1 over the person image: the sleeves laid along `subject`'s arms; null for a bottom. */
  return async (gname, gbuf, subject, width, height) => {
    const img = await decodeImage({ name: gname, data: gbuf, size: gbuf.length }, tryOn.limits, tryOn.name);
    const g = await prepareGarment(img, { preprocess: true });
    if (g.kind === 'bottom') return null;
    const fit = fitGarmentToPose(g, subject, width, height);
    const shape = new Uint8Array(width * height);
    for (const { layer: l } of warpSleevesOnArms(g, subject, fit.scale, width, height)) {
      for (let y = 0; y < l.height; y++) {
        for (let x = 0; x < l.width; x++) if (l.alpha[y * l.width + x] >= 128) shape[(y + l.y0) * width + x + l.x0] = 1;
      }
    }
    return shape;
  };
}

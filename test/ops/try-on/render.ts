// Shared by the real-model try-on tests: the pipeline run at the operation's default options,
// and a render or fixture read back as RGB.
import sharp from 'sharp';
import type { Person } from '../../../src/engine/people.js';
import { decodeImage } from '../../../src/media/image.js';
import type { LoadedInput } from '../../../src/ops/define.js';
import { getOperation } from '../../../src/ops/registry.js';
import { prepareGarment } from '../../../src/ops/try-on/garment.js';
import { tryOn, type TryOnOptions } from '../../../src/ops/try-on/index.js';
import { layOnPose } from '../../../src/ops/try-on/layout.js';
import { renderTryOn, type TryOnLight } from '../../../src/ops/try-on/pipeline.js';
import { parseOptions } from '../../../src/ops/validate.js';
import { fileInput, fixture } from '../../helpers.js';

/** try-on's pipeline on a person and a garment at the default options, lit `light` (`flat`: the unlit template the tests measure against). */
export function renderPair(person: LoadedInput, garment: LoadedInput, light: TryOnLight): ReturnType<typeof renderTryOn> {
  const options = parseOptions(getOperation('try-on')!, {}, 'field') as TryOnOptions;
  const ctx = { signal: new AbortController().signal, onProgress() {}, warn() {}, tempPath: (e: string) => `/tmp/imgtool-try-on-test.${e}` };
  return renderTryOn({ operation: 'try-on', inputs: { person, garment }, options }, ctx as never, light);
}

/** A fixture garment (`garmentPath`) prepared and laid on `subject` as the render lays it (layout.ts). */
export async function laidOn(garmentPath: string, subject: Person, width: number, height: number): Promise<ReturnType<typeof layOnPose>> {
  const g = await prepareGarment(await decodeImage(fileInput(fixture(garmentPath)), tryOn.limits, tryOn.name), { preprocess: true });
  return layOnPose(g, subject, width, height);
}

/** An image file or buffer as 3-channel RGB, flattened on white. */
export async function rgb(src: string | Buffer) {
  const { data, info } = await sharp(src).flatten({ background: '#ffffff' }).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

/**
 * The Barcelona jersey's colours (red, yellow, blue), never his skin or hair, nor the t-shirt's
 * green. `blue`: how far blue must lie above red and green (at 30 the stadium's lavender
 * backdrop beside his side, e.g. (172, 171, 205), passes).
 */
export function jersey(r: number, g: number, b: number, blue = 30): boolean {
  return (r > g + 80 && r > b + 40) || (r > 150 && g > 120 && b < Math.min(r, g) - 60) || (b > r + blue && b > g + blue);
}

/** The t-shirt's green. */
const tshirtGreen = (r: number, g: number, b: number) => g > r + 30 && g > b + 30;

/**
 * messi5.jpg's jersey left beside the green t-shirt: the pixels of rows y0..y1 - 1 (2 px in from
 * the sides) whose colour is the jersey's (`jersey`, blue 45 levels over red and green: at 30
 * the stadium's lavender backdrop along his side passes) and which lie within 2 px of the green.
 */
export function jerseyByTshirt(img: { data: Buffer; width: number }, y0: number, y1: number): number {
  const { width: w, data } = img;
  const px = (x: number, y: number) => [data[(y * w + x) * 3]!, data[(y * w + x) * 3 + 1]!, data[(y * w + x) * 3 + 2]!] as const;
  let n = 0;
  for (let y = y0; y < y1; y++) {
    for (let x = 2; x < w - 2; x++) {
      if (!jersey(...px(x, y), 45) || tshirtGreen(...px(x, y))) continue;
      let byGarment = false;
      for (let dy = -2; dy <= 2 && !byGarment; dy++) for (let dx = -2; dx <= 2; dx++) if (tshirtGreen(...px(x + dx, y + dy))) byGarment = true;
      if (byGarment) n++;
    }
  }
  return n;
}

/** Pixels of `img` within `r` of (cx, cy) that pass `pick` (given the RGB and the pixel's offset in `img.data`). */
export function countNear(
  img: { data: Buffer; width: number; height: number },
  cx: number,
  cy: number,
  r: number,
  pick: (r: number, g: number, b: number, i: number) => boolean,
): number {
  let n = 0;
  for (let y = Math.max(0, Math.floor(cy - r)); y <= Math.min(img.height - 1, Math.ceil(cy + r)); y++) {
    for (let x = Math.max(0, Math.floor(cx - r)); x <= Math.min(img.width - 1, Math.ceil(cx + r)); x++) {
      if (Math.hypot(x - cx, y - cy) > r) continue;
      const i = (y * img.width + x) * 3;
      if (pick(img.data[i]!, img.data[i + 1]!, img.data[i + 2]!, i)) n++;
    }
  }
  return n;
}

// Shared by the real-model try-on tests: the pipeline run at the operation's default options,
// and a render or fixture read back as RGB.
import sharp from 'sharp';
import type { LoadedInput } from '../../../src/ops/define.js';
import { getOperation } from '../../../src/ops/registry.js';
import type { TryOnOptions } from '../../../src/ops/try-on/index.js';
import { renderTryOn, type TryOnLight } from '../../../src/ops/try-on/pipeline.js';
import { parseOptions } from '../../../src/ops/validate.js';

/** try-on's pipeline on a person and a garment at the default options, lit `light` (`flat`: the unlit template the tests measure against). */
export function renderPair(person: LoadedInput, garment: LoadedInput, light: TryOnLight): ReturnType<typeof renderTryOn> {
  const options = parseOptions(getOperation('try-on')!, {}, 'field') as TryOnOptions;
  const ctx = { signal: new AbortController().signal, onProgress() {}, warn() {}, tempPath: (e: string) => `/tmp/imgtool-try-on-test.${e}` };
  return renderTryOn({ operation: 'try-on', inputs: { person, garment }, options }, ctx as never, light);
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

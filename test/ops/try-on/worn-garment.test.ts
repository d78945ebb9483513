// Issue 35, round 25: a garment photographed on a person (a shop's model, a friend in the shirt)
// is found with the pose model (worn-garment.ts). Before, the body heuristics grew a region from
// the torso's middle across small colour steps: from messi5.jpg it kept one blue stripe of the
// jersey (31 x 55 pixels, taken for a dress), and tried on it was a purple smear.
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { decodeImage } from '../../../src/media/image.js';
import { prepareGarment } from '../../../src/ops/try-on/garment.js';
import { tryOn } from '../../../src/ops/try-on/index.js';
import { bufferInput, fixture, runOp } from '../../helpers.js';

async function garmentOf(path: string) {
  const buf = await sharp(fixture(path)).toBuffer();
  return prepareGarment(await decodeImage(bufferInput('g.jpg', buf), tryOn.limits, tryOn.name), { preprocess: true });
}

/** The share of the opaque pixels (RGBA bytes, `n` pixels) whose colour passes `pred`. */
function shareOf(data: Uint8Array | Buffer, n: number, pred: (r: number, g: number, b: number) => boolean): number {
  let opaque = 0,
    hit = 0;
  for (let i = 0; i < n; i++) {
    if (data[i * 4 + 3]! < 128) continue;
    opaque++;
    if (pred(data[i * 4]!, data[i * 4 + 1]!, data[i * 4 + 2]!)) hit++;
  }
  return hit / opaque;
}

/** Shares of the opaque pixels that are the jersey's blue and its garnet. */
function stripes(data: Uint8Array | Buffer, n: number) {
  return {
    blue: shareOf(data, n, (r, g, b) => b > r + 20 && b > g + 20),
    red: shareOf(data, n, (r, g, b) => r > b + 30 && r > g + 30 && r < 200),
  };
}

describe('a garment worn in the garment photo', () => {
  it("takes the footballer's whole jersey, both stripes' colours and both short sleeves, as a top", async () => {
    const g = await garmentOf('images/messi5.jpg');
    expect(g.extracted).toBe(true);
    expect(g.kind).toBe('top');
    const s = stripes(g.rgba.data, g.rgba.width * g.rgba.height);
    expect(s.blue).toBeGreaterThan(0.25);
    expect(s.red).toBeGreaterThan(0.25);
    expect(g.landmarks.sleeveL).not.toBeNull();
    expect(g.landmarks.sleeveR).not.toBeNull();
    // The sleeves' pixels are the arms' share of the jersey, not the body's.
    const sleevePx = g.sleeves.data.reduce((a, v) => a + v, 0);
    const opaque = g.mask.data.reduce((a, v) => a + v, 0);
    expect(sleevePx).toBeGreaterThan(0.05 * opaque);
    expect(sleevePx).toBeLessThan(0.4 * opaque);
  });

  it("leaves the wearer's head and neck out: grace_hopper.jpg's uniform starts below her chin", async () => {
    const g = await garmentOf('images/grace_hopper.jpg');
    expect(g.extracted).toBe(true);
    expect(g.kind).toBe('top');
    // The crop starts below her chin (about row 330 of the photo's 600) and runs to the bottom:
    // under 300 rows (her neck and chin taken, it was 335).
    expect(g.rgba.height).toBeLessThan(300);
    // Navy with the white shirt: no skin tones over a tenth of it.
    const skin = shareOf(g.rgba.data, g.rgba.width * g.rgba.height, (r, gg, b) => r > 95 && gg > 40 && b > 20 && r > gg + 15 && r > b);
    expect(skin).toBeLessThan(0.1);
  });

  it('dresses a person in it: the jersey, stripes and all, on grace_hopper, charged as an extraction', async () => {
    const { result } = await runOp('try-on', { person: fixture('images/grace_hopper.jpg'), garment: fixture('images/messi5.jpg') });
    expect(result.meta?.extracted).toBe(true);
    expect(result.credits).toBe(8);
    expect(result.meta?.garment_kind).toBe('top');
    const body = result.meta!.body as { center_x: number; shoulder_y: number; shoulder_width: number };
    const { data, info } = await sharp(result.data!).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    // The chest below the shoulder line: both the blue and the garnet stripes show.
    const x0 = Math.round(body.center_x - 0.4 * body.shoulder_width),
      x1 = Math.round(body.center_x + 0.4 * body.shoulder_width);
    const y0 = Math.round(body.shoulder_y + 0.2 * body.shoulder_width);
    const rgba = new Uint8Array((x1 - x0) * (info.height - y0) * 4);
    let n = 0;
    for (let y = y0; y < info.height; y++) {
      for (let x = x0; x < x1; x++) {
        const i = (y * info.width + x) * 3;
        rgba.set([data[i]!, data[i + 1]!, data[i + 2]!, 255], n * 4);
        n++;
      }
    }
    const s = stripes(rgba, n);
    expect(s.blue).toBeGreaterThan(0.2);
    expect(s.red).toBeGreaterThan(0.2);
  });

  it('takes a shirt held up flat in front of a person as that shirt, not the clothes behind it', async () => {
    // The t-shirt fixture laid over the astronaut's chest (as bench/try-on.mjs's tshirt-worn).
    const shirt = await sharp(fixture('cutouts/tshirt.png')).resize(300, 300).toBuffer();
    const held = await sharp(fixture('images/astronaut.png'))
      .composite([{ input: shirt, left: 70, top: 195 }])
      .png()
      .toBuffer();
    const g = await prepareGarment(await decodeImage(bufferInput('held.png', held), tryOn.limits, tryOn.name), { preprocess: true });
    expect(g.extracted).toBe(true);
    expect(g.kind).toBe('top');
    expect(g.rgba.width).toBeLessThanOrEqual(300);
    expect(g.rgba.height).toBeLessThanOrEqual(300);
    // No orange flight suit in it.
    expect(shareOf(g.rgba.data, g.rgba.width * g.rgba.height, (r, gg, b) => r > gg + 60 && r > b + 60)).toBeLessThan(0.05);
  });
});

import { describe, expect, it } from 'vitest';
import sharp from 'sharp';
import { bufferInput, fixture, runOp } from '../../helpers.js';
import { SCENES } from '../../../src/ops/generate-background/index.js';
import { luma, rgbOf } from './stats.js';

// Every family has a signature a person would name at a glance; these measure it on the
// rendered output. A small subject low in the frame leaves the corners to the scene.
const SIZE = 1024;
const small = { scale: 0.3, x_center: 0.5, y_center: 0.78 };
type Img = { data: Buffer; width: number; height: number };

async function render(prompt: string, opts: Record<string, unknown> = {}, image = fixture('cutouts/apple.png')) {
  const out = await runOp('generate-background', { image }, { prompt, seed: 4, image_transform: small, ...opts });
  return { img: await rgbOf(out.result.data!), meta: out.result.meta!, warnings: out.warnings };
}

/** Mean RGB of a square patch. */
function patch(img: Img, x0: number, y0: number, s = 96): [number, number, number] {
  const m = [0, 0, 0];
  for (let y = y0; y < y0 + s; y++) for (let x = x0; x < x0 + s; x++) for (let c = 0; c < 3; c++) m[c]! += img.data[(y * SIZE + x) * 3 + c]!;
  return m.map((v) => v / (s * s)) as [number, number, number];
}
const corners = (img: Img, y: number) => [patch(img, 8, y), patch(img, SIZE - 104, y)];
const upper = (img: Img) => corners(img, 8);
const lower = (img: Img) => corners(img, SIZE - 104);
const lum = (c: number[]) => 0.299 * c[0]! + 0.587 * c[1]! + 0.114 * c[2]!;
const sat = (c: number[]) => (Math.max(...c) - Math.min(...c)) / Math.max(1, Math.max(...c));

/** Connected bright blobs (luma > thr) in a row range; returns their pixel areas. */
function blobs(img: Img, y0: number, y1: number, thr: number): number[] {
  const w = SIZE,
    h = y1 - y0;
  const seen = new Uint8Array(w * h);
  const areas: number[] = [];
  for (let i = 0; i < w * h; i++) {
    if (seen[i] || luma(img.data, y0 * w + i) <= thr) continue;
    let area = 0;
    const stack = [i];
    seen[i] = 1;
    while (stack.length) {
      const j = stack.pop()!;
      area++;
      const x = j % w,
        y = (j / w) | 0;
      for (const [dx, dy] of [
        [1, 0],
        [-1, 0],
        [0, 1],
        [0, -1],
      ] as const) {
        const nx = x + dx,
          ny = y + dy;
        if (nx < 0 || ny < 0 || nx >= w || ny >= h) continue;
        const k = ny * w + nx;
        if (!seen[k] && luma(img.data, y0 * w + k) > thr) {
          seen[k] = 1;
          stack.push(k);
        }
      }
    }
    areas.push(area);
  }
  return areas;
}

describe('generate-background scene families', () => {
  it('beach: blue sky in the upper corners, sand in the lower corners, sea between', async () => {
    const { img, meta } = await render('sunlit beach with sand and ocean');
    expect(meta.family).toBe('beach');
    for (const c of upper(img)) expect(c[2] - c[0], `sky ${c}`).toBeGreaterThan(40);
    for (const c of lower(img)) {
      expect(c[0] - c[2], `sand ${c}`).toBeGreaterThan(30);
      expect(lum(c)).toBeGreaterThan(140);
    }
    // The sea: a band, bluer than the sand and darker than the sky, just below the horizon.
    const seaRows = [...Array(300).keys()]
      .map((k) => 300 + k)
      .map((y) => patch(img, 8, y, 8))
      .filter((c) => c[2] > c[0] + 30 && lum(c) < 170);
    expect(seaRows.length).toBeGreaterThan(15);
  }, 60_000);

  it('night city: dark upper half with many small bright blobs', async () => {
    const { img, meta } = await render('city street at night with bokeh lights');
    expect(meta.family).toBe('city');
    const top = img.data.subarray(0, SIZE * 512 * 3);
    let s = 0;
    for (let i = 0; i < SIZE * 512; i++) s += luma(top, i);
    expect(s / (SIZE * 512)).toBeLessThan(70);
    const areas = blobs(img, 0, 512, 170).filter((a) => a >= 20);
    expect(areas.length).toBeGreaterThan(10);
    // Small: each light is a disc, none a lit area.
    expect(Math.max(...areas)).toBeLessThan(0.03 * SIZE * 512);
  }, 60_000);

  it('snow: bright, low-saturation ground; garden: green ground; desert: orange ground under a blue sky', async () => {
    const snow = (await render('on fresh snow in a winter forest')).img;
    for (const c of lower(snow)) {
      expect(lum(c), `snow ${c}`).toBeGreaterThan(175);
      expect(sat(c)).toBeLessThan(0.15);
    }
    const garden = (await render('green grass in a sunny garden')).img;
    for (const c of lower(garden)) expect(c[1] - Math.max(c[0], c[2]), `grass ${c}`).toBeGreaterThan(15);
    const desert = (await render('desert sand dunes')).img;
    for (const c of lower(desert)) {
      expect(c[0] - c[2], `dune ${c}`).toBeGreaterThan(60);
      expect(c[0]).toBeGreaterThan(c[1]);
    }
    for (const c of upper(desert)) expect(c[2]).toBeGreaterThan(c[0]);
  }, 90_000);

  it('forest: foliage and trunks behind, earth in front; rocks: grey, textured ground', async () => {
    const forest = (await render('forest trail')).img;
    // The canopy fills most of the backdrop: green over blue across the upper rows.
    let green = 0,
      n = 0;
    for (let y = 40; y < 480; y += 24)
      for (let x = 0; x < SIZE; x += 24) {
        const c = patch(forest, x, y, 8);
        n++;
        if (c[1] > c[2] && c[1] > c[0]) green++;
      }
    expect(green / n).toBeGreaterThan(0.5);
    for (const c of lower(forest)) expect(c[0] - c[2], `earth ${c}`).toBeGreaterThan(10);
    const rocks = (await render('on rocks')).img;
    for (const c of lower(rocks)) {
      expect(sat(c), `rock ${c}`).toBeLessThan(0.2);
      expect(lum(c)).toBeLessThan(170);
    }
  }, 60_000);

  it('pool edge: turquoise water behind the subject, pale stone under it', async () => {
    const { img } = await render('by the pool edge');
    // Between the hedge and the subject: water.
    const water = patch(img, 8, 560, 64);
    expect(water[1] - water[0], `water ${water}`).toBeGreaterThan(35);
    expect(water[2] - water[0]).toBeGreaterThan(45);
    for (const c of lower(img)) expect(c[0]).toBeGreaterThanOrEqual(c[2]);
  }, 60_000);

  it('sky: most of the frame is sky; studio sweep: no floor/wall seam', async () => {
    const sky = (await render('against a blue sky with white clouds')).img;
    let blue = 0;
    for (let y = 0; y < 640; y += 32)
      for (let x = 0; x < SIZE; x += 32) {
        const c = patch(sky, x, y, 8);
        if (c[2] > c[0] + 15) blue++;
      }
    expect(blue / ((640 / 32) * (SIZE / 32))).toBeGreaterThan(0.5);
    const studio = (await render('white studio sweep')).img;
    // Row means in a column strip away from the subject change smoothly top to bottom.
    let maxStep = 0,
      prev = -1;
    for (let y = 0; y < SIZE; y += 4) {
      const m = lum(patch(studio, 20, y, 4));
      if (prev >= 0) maxStep = Math.max(maxStep, Math.abs(m - prev));
      prev = m;
    }
    expect(maxStep).toBeLessThan(6);
  }, 60_000);

  it('podium: a shape under the subject, distinct from the floor beside it', async () => {
    const { img, meta } = await render('pastel pink podium', { image_transform: { scale: 0.3, x_center: 0.5, y_center: 0.5 } }, fixture('cutouts/handbag.png'));
    expect(meta.family).toBe('podium');
    const box = meta.subject_box as { x0: number; x1: number; y1: number };
    const cx = Math.round((box.x0 + box.x1) / 2);
    const under = patch(img, cx - 24, box.y1 + 60, 48);
    const beside = patch(img, 8, box.y1 + 60, 48);
    expect(Math.abs(lum(under) - lum(beside)) + Math.abs(under[0] - beside[0])).toBeGreaterThan(8);
    // Pink: the podium carries the colour.
    expect(under[0]).toBeGreaterThan(under[1] + 8);
  }, 60_000);

  it('drapes fold vertically; petals scatter; the time of day and weather change the sky', async () => {
    const drape = (await render('draped silk curtain')).img;
    let gx = 0,
      gy = 0;
    for (let y = 50; y < 300; y++)
      for (let x = 0; x < SIZE - 1; x++) {
        const i = y * SIZE + x;
        gx += Math.abs(luma(drape.data, i + 1) - luma(drape.data, i));
        gy += Math.abs(luma(drape.data, i + SIZE) - luma(drape.data, i));
      }
    expect(gx).toBeGreaterThan(gy * 1.5);

    const plain = (await render('white linen')).img;
    const petals = (await render('red rose petals on white linen')).img;
    const reds = (img: Img) => {
      let n = 0;
      for (let i = SIZE * 700; i < SIZE * SIZE; i++) {
        const r = img.data[i * 3]!,
          g = img.data[i * 3 + 1]!;
        if (r - g > 50) n++;
      }
      return n;
    };
    // The apple is red too: count against the same apple on plain linen.
    expect(reds(petals)).toBeGreaterThan(reds(plain) + 2000);

    const day = (await render('beach')).img;
    const sunset = (await render('beach at sunset')).img;
    const night = (await render('beach at night')).img;
    const horizonBand = (img: Img) => patch(img, 200, 250, 96);
    expect(horizonBand(sunset)[0] - horizonBand(sunset)[2]).toBeGreaterThan(horizonBand(day)[0] - horizonBand(day)[2] + 60);
    expect(lum(patch(night, 8, 8))).toBeLessThan(40);
    const overcast = (await render('beach, overcast')).img;
    expect(sat(patch(overcast, 8, 8))).toBeLessThan(sat(patch(day, 8, 8)) - 0.2);
  }, 120_000);
});

describe('generate-background interiors', () => {
  it('hint the room: tiles in a kitchen, shelves in a living room, cool tile in a bathroom', async () => {
    // Horizontal structure on the wall (grout lines, shelf boards), even out of focus: row means
    // of the wall (rows 40..320) minus their local average, against a plain plaster wall.
    const wallTexture = (img: Img) => {
      const row = (y: number) => {
        let m = 0;
        for (let x = 0; x < SIZE; x++) m += luma(img.data, y * SIZE + x);
        return m / SIZE;
      };
      const means = Array.from({ length: SIZE }, (_, y) => (y < 340 ? row(y) : 0));
      let h = 0;
      for (let y = 40; y < 320; y++) h += Math.abs(means[y]! - (means[y - 12]! + means[y + 12]!) / 2);
      return h / 280;
    };
    const plain = wallTexture((await render('plaster wall, linen table')).img);
    const kitchen = await render('kitchen counter');
    const shelves = await render('living room shelf');
    expect(kitchen.meta.family).toBe('kitchen');
    expect(shelves.meta.family).toBe('interior');
    expect(wallTexture(kitchen.img)).toBeGreaterThan(plain * 5);
    expect(wallTexture(shelves.img)).toBeGreaterThan(plain * 5);
    const bath = (await render('bathroom')).img;
    const wall = patch(bath, 8, 60, 200);
    expect(wall[2]).toBeGreaterThan(wall[0]);
  }, 90_000);
});

describe('generate-background prompt report', () => {
  it('lists understood terms and ignored words in meta, and warns when under half were understood', async () => {
    const good = await render('sunlit beach with sand and ocean');
    expect(good.meta.prompt_ignored).toEqual([]);
    expect(good.meta.prompt_understood).toBe(1);
    expect(good.meta.prompt_terms).toEqual(expect.arrayContaining(['sunlit', 'beach->beach', 'ocean->beach']));
    expect(good.warnings).toEqual([]);
    const poor = await render('zorbly quux flimflam beach');
    expect(poor.meta.prompt_ignored).toEqual(['zorbly', 'quux', 'flimflam']);
    expect(poor.meta.prompt_understood).toBe(0.25);
    expect(poor.warnings.join()).toMatch(/only 1 of 4 words understood; ignored: zorbly, quux, flimflam/);
    expect(poor.meta.family).toBe('beach');
  }, 60_000);
});

describe('generate-background: the subject belongs', () => {
  // A flat mid-grey square: any colour it takes on comes from the scene's light.
  const grey = async () => {
    const s = 160,
      px = Buffer.alloc(s * s * 4);
    for (let i = 0; i < s * s; i++) {
      px[i * 4] = px[i * 4 + 1] = px[i * 4 + 2] = 128;
      px[i * 4 + 3] = 255;
    }
    const png = await sharp(px, { raw: { width: s, height: s, channels: 4 } })
      .extend({ top: 20, bottom: 20, left: 20, right: 20, background: { r: 0, g: 0, b: 0, alpha: 0 } })
      .png()
      .toBuffer();
    return bufferInput('grey.png', png);
  };
  const centre = (img: Img) => patch(img, 512 - 16, Math.round(0.78 * SIZE) - 16, 32);

  it('takes the colour temperature and brightness of the scene light', async () => {
    const input = await grey();
    const run = async (prompt: string) =>
      centre(await rgbOf((await runOp('generate-background', { image: input }, { prompt, seed: 2, image_transform: small })).result.data!));
    const day = await run('beach at noon');
    const sunset = await run('beach at sunset');
    const night = await run('beach at night');
    const cityNight = await run('city street at night');
    expect(sunset[0] - sunset[2]).toBeGreaterThan(day[0] - day[2] + 20);
    expect(lum(night)).toBeLessThan(lum(day) - 25);
    expect(lum(cityNight)).toBeLessThan(lum(day) - 25);
    // Moonlight is blue; the city's street lamps are not.
    expect(night[2] - night[0]).toBeGreaterThan(day[2] - day[0] + 3);
    expect(cityNight[0] - cityNight[2]).toBeGreaterThan(night[0] - night[2]);
  }, 60_000);

  it('is mirrored in glossy ground (water, glass) and not on matte ground', async () => {
    const redBelow = async (prompt: string) => {
      const { img, meta } = await render(prompt);
      const box = meta.subject_box as { x0: number; x1: number; y1: number };
      const cx = Math.round((box.x0 + box.x1) / 2);
      const below = patch(img, cx - 20, box.y1 + 6, 40);
      const beside = patch(img, 40, box.y1 + 6, 40);
      return below[0] - below[2] - (beside[0] - beside[2]);
    };
    expect(await redBelow('on calm water')).toBeGreaterThan(20);
    expect(await redBelow('black glass surface')).toBeGreaterThan(20);
    expect(await redBelow('concrete table')).toBeLessThan(10);
  }, 90_000);
});

describe('generate-background presets', () => {
  it('are pairwise at least 10/255 apart on a held-out cut-out', async () => {
    const px: Record<string, Buffer> = {};
    for (const scene of SCENES) {
      const { result } = await runOp(
        'generate-background',
        { image: fixture('cutouts/basketball.png') },
        { scene, seed: 3, image_transform: { scale: 0.5, x_center: 0.5, y_center: 0.62 } },
      );
      px[scene] = (await rgbOf(result.data!)).data;
    }
    for (let a = 0; a < SCENES.length; a++) {
      for (let b = a + 1; b < SCENES.length; b++) {
        const A = px[SCENES[a]!]!,
          B = px[SCENES[b]!]!;
        let d = 0;
        for (let i = 0; i < A.length; i++) d += Math.abs(A[i]! - B[i]!);
        expect(d / A.length, `${SCENES[a]} vs ${SCENES[b]}`).toBeGreaterThanOrEqual(10);
      }
    }
  }, 90_000);
});

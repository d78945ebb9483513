import { describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import sharp from 'sharp';
import { bufferInput, fileInput, fixture, runOp } from '../../helpers.js';
import { generateBackground } from '../../../src/ops/generate-background/index.js';
import { decodeImage } from '../../../src/media/image.js';
import { gradeTables, placeLayer, subjectGrade } from '../../../src/ops/generate-background/compose.js';
import { makeLayout, renderScene } from '../../../src/ops/generate-background/render.js';
import { PRESETS } from '../../../src/ops/generate-background/scenes.js';
import { luma, rgbOf } from './stats.js';
import { isImgtoolError } from '../../../src/errors.js';

const SIZE = 1024;

/** The scene the pipeline rendered behind the subject, re-rendered from the same seed. */
async function sceneBehind(file: string, scene: string, seed: number, t: { scale: number; x_center: number; y_center: number }) {
  const img = await decodeImage(fileInput(fixture(file)), generateBackground.limits, 'test');
  const placement = await placeLayer(img, t, SIZE);
  const layout = makeLayout(PRESETS[scene]!, SIZE, placement.baseX, placement.baseY);
  const rendered = await renderScene(PRESETS[scene]!, layout, seed);
  return { placement, bg: rendered.rgb };
}

describe('generate-background placement', () => {
  it('puts the subject where image_transform says, pixels unaltered apart from resampling and the scene-light grade', async () => {
    const t = { scale: 0.5, x_center: 0.3, y_center: 0.6 };
    const { result } = await runOp('generate-background', { image: fixture('cutouts/handbag.png') }, { scene: 'wood', seed: 3, image_transform: t });
    const out = await rgbOf(result.data!);
    // Layer 256 px -> 512 px, centred at (307.2, 614.4): left 51, top 358.
    const w = 512,
      left = Math.round(0.3 * SIZE - w / 2),
      top = Math.round(0.6 * SIZE - w / 2);
    const ref = await sharp(fixture('cutouts/handbag.png')).resize(w, w, { kernel: 'cubic' }).raw().toBuffer();
    // The subject takes the scene's light (warm for the wood preset): the documented per-channel grade.
    const lut = gradeTables(subjectGrade(PRESETS.wood!));
    // Interior only: 12 px in from any transparent pixel (light wrap touches the rim on purpose).
    const alpha = await sharp(ref, { raw: { width: w, height: w, channels: 4 } })
      .extractChannel(3)
      .blur(4)
      .threshold(254)
      .raw()
      .toBuffer();
    const err = (dx: number, dy: number) => {
      let s = 0,
        n = 0;
      for (let y = 16; y < w - 16; y += 2) {
        for (let x = 16; x < w - 16; x += 2) {
          if (alpha[y * w + x]! < 255) continue;
          const o = ((top + y + dy) * SIZE + left + x + dx) * 3;
          for (let c = 0; c < 3; c++) s += Math.abs(out.data[o + c]! - lut[c]![ref[(y * w + x) * 4 + c]!]!);
          n += 3;
        }
      }
      return s / n;
    };
    const aligned = err(0, 0);
    expect(aligned).toBeLessThan(3.5);
    // A misplaced subject would match better somewhere else.
    for (const [dx, dy] of [
      [6, 0],
      [-6, 0],
      [0, 6],
      [0, -6],
    ] as const)
      expect(err(dx, dy)).toBeGreaterThan(aligned + 2);
    expect(result.meta?.subject_box).toMatchObject({ x0: expect.any(Number) });
    const box = result.meta!.subject_box as { x0: number; y0: number; x1: number; y1: number };
    // handbag.png's opaque box is x 17..238, y 16..238 of 256, doubled.
    expect(Math.abs(box.x0 - (left + 34))).toBeLessThanOrEqual(2);
    expect(Math.abs(box.y1 - (top + 477))).toBeLessThanOrEqual(2);
  }, 60_000);

  it('casts the shadow below the subject, at its base, and leaves the rest of the scene alone', async () => {
    const t = { scale: 0.45, x_center: 0.5, y_center: 0.6 };
    const { result } = await runOp('generate-background', { image: fixture('cutouts/crown.png') }, { scene: 'industrial', seed: 9, image_transform: t });
    const out = await rgbOf(result.data!);
    const { placement, bg } = await sceneBehind('cutouts/crown.png', 'industrial', 9, t);
    const box = placement.bbox!;
    const h = box.y1 - box.y0;
    let n = 0,
      sy = 0,
      above = 0,
      far = 0,
      farN = 0;
    for (let y = 0; y < SIZE; y++) {
      for (let x = 0; x < SIZE; x++) {
        const i = y * SIZE + x;
        if (placement.rgba[i * 4 + 3]! > 0) continue;
        const d = 1 - (luma(out.data, i) + 1) / (luma(bg, i) + 1);
        if (y < 200) {
          far += Math.abs(d);
          farN++;
        }
        if (d > 0.15) {
          n++;
          sy += y;
          if (y < box.y0 + h * 0.5) above++;
        }
      }
    }
    expect(far / farN).toBeLessThan(0.03); // the comparison itself is sound: no change far away
    expect(n).toBeGreaterThan(500);
    expect(sy / n).toBeGreaterThan(box.y1 - h * 0.15);
    expect(above / n).toBeLessThan(0.02);
  }, 60_000);

  it('respects RGBA alpha: transparent pixels show the scene, not the layer colour', async () => {
    // Opaque red square with a transparent round hole: the hole must show the scene.
    const s = 200;
    const px = Buffer.alloc(s * s * 4);
    for (let y = 0; y < s; y++)
      for (let x = 0; x < s; x++) {
        const i = (y * s + x) * 4;
        px[i] = 220;
        px[i + 1] = 20;
        px[i + 2] = 30;
        px[i + 3] = Math.hypot(x - 100, y - 100) < 50 ? 0 : 255;
      }
    const png = await sharp(px, { raw: { width: s, height: s, channels: 4 } })
      .png()
      .toBuffer();
    const { result, warnings } = await runOp('generate-background', { image: bufferInput('hole.png', png) }, { scene: 'linen', seed: 1 });
    expect(result.meta?.background_removed).toBe(false);
    expect(warnings).toEqual([]);
    const out = await rgbOf(result.data!);
    // Scale 1: the 200 px layer fills the canvas, hole radius 256 px around the centre.
    const at = (x: number, y: number) => [...out.data.subarray((y * SIZE + x) * 3, (y * SIZE + x) * 3 + 3)];
    const hole = at(512, 512);
    const frame = at(100, 100);
    expect(frame[0]! - frame[2]!).toBeGreaterThan(150);
    expect(Math.abs(hole[0]! - hole[2]!)).toBeLessThan(60);
    expect(hole[1]).toBeGreaterThan(120);
  }, 60_000);

  it('is reproducible with a seed and warns when scene overrides the prompt', async () => {
    const a = await runOp(
      'generate-background',
      { image: fixture('cutouts/apple.png') },
      { scene: 'marble', prompt: 'dark brick', negative_prompt: 'wood', seed: 42, image_transform: { scale: 0.4 } },
    );
    const b = await runOp('generate-background', { image: fixture('cutouts/apple.png') }, { scene: 'marble', seed: 42, image_transform: { scale: 0.4 } });
    const c = await runOp('generate-background', { image: fixture('cutouts/apple.png') }, { scene: 'marble', seed: 43, image_transform: { scale: 0.4 } });
    expect(a.warnings.join()).toMatch(/prompt and negative_prompt are ignored/);
    expect(b.warnings).toEqual([]);
    expect(a.result.data!.equals(b.result.data!)).toBe(true);
    expect(a.result.data!.equals(c.result.data!)).toBe(false);
    expect(a.progress.at(-1)?.fraction).toBe(1);
  }, 60_000);

  it('stops with job_cancelled when the signal fires', async () => {
    const ac = new AbortController();
    ac.abort();
    const err = await runOp('generate-background', { image: fixture('cutouts/apple.png') }, { scene: 'wood' }, ac.signal).catch((e) => e);
    expect(isImgtoolError(err) && err.code).toBe('job_cancelled');
  });

  const model = resolve(__dirname, '../../../models/build/isnet.onnx');
  it.skipIf(!existsSync(model))(
    'removes the background of an RGB photo and places the subject at scale 0.6',
    async () => {
      const { result } = await runOp('generate-background', { image: fixture('images/orange.jpg') }, { scene: 'counter', seed: 2 });
      expect(result.meta?.background_removed).toBe(true);
      const box = result.meta!.subject_box as { x0: number; y0: number; x1: number; y1: number };
      const longer = Math.max(box.x1 - box.x0 + 1, box.y1 - box.y0 + 1);
      expect(Math.abs(longer - 0.6 * SIZE)).toBeLessThan(0.03 * SIZE);
      expect(Math.abs((box.x0 + box.x1) / 2 - 512)).toBeLessThan(12);
    },
    120_000,
  );
});

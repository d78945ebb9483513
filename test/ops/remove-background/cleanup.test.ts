import { describe, expect, it } from 'vitest';
import sharp from 'sharp';
import { bufferInput, fixture, runOp } from '../../helpers.js';
import { scoreAlpha } from './composites.js';
import { distanceToSeeds, keepSubject, labelRegions } from '../../../src/ops/remove-background/cleanup.js';
import { agreeMasks } from '../../../src/ops/remove-background/ensemble.js';

const W = 200, H = 150;

function disc(mask: Uint8Array, cx: number, cy: number, r: number, v = 255): void {
  for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) if ((x - cx) ** 2 + (y - cy) ** 2 <= r * r) mask[y * W + x] = v;
}
const at = (m: Uint8Array, x: number, y: number) => m[y * W + x]!;

describe('remove-background cleanup: keep the subject, drop stray regions', () => {
  it('labels 8-connected regions with their areas', () => {
    const m = new Uint8Array(W * H);
    m[0] = m[W + 1] = m[2 * W + 2] = 255; // a diagonal line is one region
    m[10] = 200;
    m[12] = 127; // below threshold: not a region
    const { areas } = labelRegions(m, W, H);
    expect(areas.slice(1).sort()).toEqual([1, 3]);
  });

  it('distances are close to Euclidean', () => {
    const seed = new Uint8Array(W * H);
    seed[50 * W + 50] = 1;
    const d = distanceToSeeds(seed, W, H);
    expect(d[50 * W + 80]).toBeCloseTo(30, 5);
    expect(Math.abs(d[90 * W + 80]! - 50) / 50).toBeLessThan(0.08);
  });

  it('drops a small region far from the subject and weak values far away, keeps the soft halo', () => {
    const m = new Uint8Array(W * H);
    disc(m, 60, 75, 40);
    for (let x = 100; x < 103; x++) m[75 * W + x] = 90; // soft edge right next to the subject
    disc(m, 180, 20, 6); // stray blob, ~2% of the subject's area
    disc(m, 170, 130, 8, 100); // weak speckle far away
    const out = keepSubject(m, W, H);
    expect(at(out, 60, 75)).toBe(255);
    expect(at(out, 101, 75)).toBe(90);
    expect(at(out, 180, 20)).toBe(0);
    expect(at(out, 170, 130)).toBe(0);
    expect(m[20 * W + 180]).toBe(255); // the input is not modified
  });

  it('keeps a small part close to the subject (a detached strap), drops the same part far away', () => {
    const m = new Uint8Array(W * H);
    disc(m, 60, 75, 40);
    disc(m, 104, 75, 2); // 2 px gap to the subject's edge
    disc(m, 190, 140, 2);
    const out = keepSubject(m, W, H);
    expect(at(out, 104, 75)).toBe(255);
    expect(at(out, 190, 140)).toBe(0);
  });

  it('keeps every part of a multi-part subject of comparable size', () => {
    const m = new Uint8Array(W * H);
    disc(m, 45, 75, 35);
    disc(m, 155, 75, 28); // 64% of the larger one's area, 40 px away
    const out = keepSubject(m, W, H);
    expect(at(out, 45, 75)).toBe(255);
    expect(at(out, 155, 75)).toBe(255);
  });

  it('leaves a mask with no confident region unchanged', () => {
    const m = new Uint8Array(W * H).fill(60);
    expect(keepSubject(m, W, H)).toBe(m);
  });
});

describe('remove-background ensemble: ISNet checked by U2-Net-p', () => {
  it('keeps what both models call subject', () => {
    const a = Uint8Array.from([255, 255, 0, 200, 255]);
    const b = Uint8Array.from([255, 0, 255, 250, 100]);
    expect([...agreeMasks(a, b)]).toEqual([255, 0, 0, 200, 100]);
  });

  it('uses ISNet alone when the models pick different objects (a peg vs the pot it is on)', () => {
    const isnet = new Uint8Array(100).fill(255, 0, 20);
    const u2 = new Uint8Array(100).fill(255, 15, 75); // overlap 5 px, a quarter of the smaller subject
    expect(agreeMasks(isnet, u2)).toBe(isnet);
    const u2agrees = new Uint8Array(100).fill(255, 5, 75); // overlap 15 px of 20
    expect(agreeMasks(isnet, u2agrees)).not.toBe(isnet);
  });

  it('falls back to U2-Net-p when ISNet lost the subject', () => {
    const isnet = new Uint8Array(100);
    const u2 = new Uint8Array(100).fill(255, 0, 50);
    isnet[0] = 255; // 1 pixel against 50
    expect(agreeMasks(isnet, u2)).toBe(u2);
  });
});

describe('remove-background cleanup on real composites', () => {
  // Two products of similar size side by side: the cleanup must keep both (default model).
  it('two cut-outs side by side are both kept (IoU >= 0.9 against their union)', async () => {
    const w = 360, h = 200, side = 150;
    const bg = await sharp(fixture('textures/gravel.png')).resize(w, h, { fit: 'cover' }).removeAlpha().raw().toBuffer();
    const alpha = new Uint8Array(w * h);
    for (const [name, left] of [['handbag', 15], ['basketball', 195]] as const) {
      const fg = await sharp(fixture(`cutouts/${name}.png`)).resize(side, side).ensureAlpha().raw().toBuffer();
      const top = 25;
      for (let y = 0; y < side; y++) for (let x = 0; x < side; x++) {
        const s = (y * side + x) * 4, a = fg[s + 3]!, i = (top + y) * w + left + x;
        alpha[i] = a;
        for (let c = 0; c < 3; c++) bg[i * 3 + c] = Math.round((fg[s + c]! * a + bg[i * 3 + c]! * (255 - a)) / 255);
      }
    }
    const file = await sharp(bg, { raw: { width: w, height: h, channels: 3 } }).png().toBuffer();
    const { result } = await runOp('remove-background', { image: bufferInput('pair.png', file) }, { mask_only: true });
    const { data } = await sharp(result.data!).extractChannel(0).raw().toBuffer({ resolveWithObject: true });
    const pred = new Uint8Array(data);
    expect(scoreAlpha(pred, alpha, w, h).iou).toBeGreaterThanOrEqual(0.9);
    // Each product on its own is found, not just the pair on average.
    for (const [x0, x1] of [[15, 165], [195, 345]]) {
      let inter = 0, truth = 0;
      for (let y = 0; y < h; y++) for (let x = x0; x < x1; x++) {
        const i = y * w + x;
        if (alpha[i]! >= 128) { truth++; if (pred[i]! >= 128) inter++; }
      }
      expect(inter / truth).toBeGreaterThan(0.9);
    }
  }, 60_000);
});

import { readFileSync } from 'node:fs';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { ensureModel } from '../../../src/engine/models.js';
import { FrameSegmenter } from '../../../src/ops/video-remove-background/segmenter.js';
import { fixture } from '../../helpers.js';
import { maskIou as iou } from '../../../bench/lib/metrics.mjs';

/** A 256x144 frame: the apple cut-out (exact alpha) over brick, and that alpha as the truth. */
async function composite() {
  const W = 256,
    H = 144,
    S = 96,
    L = 80,
    T = 24;
  const bg = await sharp(fixture('textures/brick.png')).resize(W, H, { fit: 'cover' }).removeAlpha().raw().toBuffer();
  const fg = await sharp(fixture('cutouts/apple.png')).resize(S, S).ensureAlpha().raw().toBuffer();
  const rgb = Buffer.from(bg);
  const truth = new Uint8Array(W * H);
  for (let y = 0; y < S; y++) {
    for (let x = 0; x < S; x++) {
      const j = (y * S + x) * 4,
        i = (T + y) * W + L + x,
        a = fg[j + 3]! / 255;
      truth[i] = fg[j + 3]!;
      for (let c = 0; c < 3; c++) rgb[i * 3 + c] = Math.round(fg[j + c]! * a + bg[i * 3 + c]! * (1 - a));
    }
  }
  return { rgb, truth, W, H };
}

describe('u2netp at free input sizes', () => {
  it('the built u2netp declares H and W symbolic (models/build.mjs frees them)', () => {
    const built = readFileSync(ensureModel('u2netp'));
    // Dimension.dim_param = 2 holding "H": bytes 12 01 48, inside a Dimension (0a 03).
    expect(built.indexOf(Buffer.from([0x0a, 0x03, 0x12, 0x01, 0x48]))).toBeGreaterThan(0);
    expect(built.indexOf(Buffer.from([0x0a, 0x03, 0x12, 0x01, 0x57]))).toBeGreaterThan(0);
  });

  it('segments a frame at 256 and 320 with two frames in flight, both close to the exact alpha', async () => {
    const { rgb, truth, W, H } = await composite();
    const fast = new FrameSegmenter('u2netp', W, H, { side: 256, sessions: 2 });
    const ref = new FrameSegmenter('u2netp', W, H, { side: 320, sessions: 1 });
    expect(fast.concurrency).toBe(2);
    const [a, b, c] = await Promise.all([fast.segment(rgb), fast.segment(rgb), ref.segment(rgb)]);
    expect(a.length).toBe(W * H);
    // Same input, separate sessions: the same matte.
    expect(Buffer.from(a).equals(Buffer.from(b))).toBe(true);
    expect(iou(a, truth)).toBeGreaterThan(0.85);
    expect(iou(c, truth)).toBeGreaterThan(0.85);
    // The sizes really differ (a patched model that ignored the size would give identical mattes).
    expect(Buffer.from(a).equals(Buffer.from(c))).toBe(false);
  }, 60_000);

  it('stops before inference when the job is already cancelled', async () => {
    const { rgb, W, H } = await composite();
    const ac = new AbortController();
    ac.abort();
    await expect(new FrameSegmenter('u2netp', W, H).segment(rgb, ac.signal)).rejects.toMatchObject({ code: 'job_cancelled' });
  });
});

describe('--model person (MediaPipe selfie segmentation)', () => {
  it('keeps a person and leaves a scene without people empty', async () => {
    const W = 240,
      H = 280;
    const person = await sharp(fixture('images/grace_hopper.jpg')).resize(W, H, { fit: 'fill' }).removeAlpha().raw().toBuffer();
    const seg = new FrameSegmenter('person', W, H, { sessions: 1 });
    expect(seg.side).toBe(256);
    const m = await seg.segment(person);
    expect(m.length).toBe(W * H);
    // Face and chest (centre) are person; the flag corner top-left is not.
    expect(m[Math.round(H * 0.45) * W + Math.round(W * 0.5)]).toBeGreaterThanOrEqual(200);
    expect(m[Math.round(H * 0.85) * W + Math.round(W * 0.5)]).toBeGreaterThanOrEqual(200);
    expect(m[Math.round(H * 0.08) * W + Math.round(W * 0.08)]).toBeLessThan(30);
    // A wall and nobody: empty. (The apple composite is not: the selfie model takes a round,
    // head-sized object for a person, 8% of that frame >= 128; docs/ops/video-remove-background.md.)
    const wall = await sharp(fixture('textures/brick.png')).resize(W, H, { fit: 'cover' }).removeAlpha().raw().toBuffer();
    const empty = await seg.segment(wall);
    expect(empty.reduce((s, v) => s + v, 0) / empty.length).toBeLessThan(2);
  }, 60_000);
});

import { describe, expect, it } from 'vitest';
import { MatteStabiliser } from '../../../src/ops/video-remove-background/stabilise.js';
import { attachAlpha, compositeOver, parseColor } from '../../../src/ops/video-remove-background/composite.js';
import { setGifDisposal } from '../../../src/ops/video-remove-background/gif.js';

const W = 160;
const H = 120;

/** Deterministic PRNG so the noisy mattes are the same on every run. */
function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** A textured RGB frame with a bright square at (sx, sy). */
function frame(sx: number, sy: number, size = 32, texture = 0): Uint8Array {
  const f = new Uint8Array(W * H * 3);
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const inside = x >= sx && x < sx + size && y >= sy && y < sy + size;
      const v = inside ? 230 : 60 + (((x >> 3) + (y >> 3) + texture) & 1) * 40;
      f.set([v, inside ? 40 : v, v], (y * W + x) * 3);
    }
  }
  return f;
}

function squareMatte(sx: number, sy: number, size = 32): Uint8Array {
  const m = new Uint8Array(W * H);
  for (let y = sy; y < sy + size; y++) for (let x = sx; x < sx + size; x++) if (x >= 0 && x < W && y >= 0 && y < H) m[y * W + x] = 255;
  return m;
}

function meanAbsDiff(a: Uint8Array, b: Uint8Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += Math.abs(a[i]! - b[i]!);
  return s / a.length;
}

describe('MatteStabiliser', () => {
  it('cuts matte flicker on a static scene by well over 40% and stays on the truth', () => {
    const rand = rng(7);
    const truth = squareMatte(60, 40);
    const img = frame(60, 40);
    const stab = new MatteStabiliser(W, H, { reuseBelow: -1 });
    let rawFlicker = 0;
    let outFlicker = 0;
    let outError = 0;
    let prevRaw: Uint8Array | undefined;
    let prevOut: Uint8Array | undefined;
    const N = 30;
    for (let t = 0; t < N; t++) {
      // Per-frame model wobble: noise everywhere near the edge, plus a whole border row that
      // flips on some frames (what u2netp does on thin edges).
      const raw = new Uint8Array(truth);
      for (let i = 0; i < raw.length; i++) {
        const x = i % W;
        const y = (i / W) | 0;
        const nearEdge = x >= 56 && x < 96 && y >= 36 && y < 76;
        if (nearEdge) raw[i] = Math.max(0, Math.min(255, raw[i]! + Math.round((rand() - 0.5) * 120)));
      }
      if (t % 3 === 0) for (let x = 60; x < 92; x++) raw[39 * W + x] = 255;
      expect(stab.analyse(img).sceneCut).toBe(t === 0);
      const out = new Uint8Array(stab.update(raw));
      if (prevRaw) rawFlicker += meanAbsDiff(raw, prevRaw);
      if (prevOut) outFlicker += meanAbsDiff(out, prevOut);
      if (t > 5) outError += meanAbsDiff(out, truth);
      prevRaw = raw;
      prevOut = out;
    }
    expect(outFlicker).toBeLessThan(0.6 * rawFlicker);
    expect(outError / (N - 6)).toBeLessThan(3);
  });

  it('follows a moving subject without lag (no smearing)', () => {
    const stab = new MatteStabiliser(W, H);
    let inter = 0;
    let union = 0;
    for (let t = 0; t < 20; t++) {
      const sx = 10 + 5 * t;
      stab.analyse(frame(sx, 40));
      const raw = squareMatte(sx, 40);
      const out = stab.update(raw);
      if (t === 0) continue;
      for (let i = 0; i < raw.length; i++) {
        const a = raw[i]! >= 128;
        const b = out[i]! >= 128;
        if (a && b) inter++;
        if (a || b) union++;
      }
      // The square's new leading edge is fully foreground at once; where it left is background.
      expect(out[50 * W + sx + 30]).toBeGreaterThan(250);
      expect(out[50 * W + sx - 3]).toBeLessThan(5);
    }
    expect(inter / union).toBeGreaterThan(0.98);
  });

  it('resets on a scene cut', () => {
    const stab = new MatteStabiliser(W, H);
    stab.analyse(frame(20, 20));
    stab.update(squareMatte(20, 20));
    stab.analyse(frame(20, 20));
    stab.update(squareMatte(20, 20));
    const cut = new Uint8Array(W * H * 3).fill(250);
    expect(stab.analyse(cut).sceneCut).toBe(true);
    const raw = squareMatte(100, 70);
    expect(Buffer.from(stab.update(raw)).equals(Buffer.from(raw))).toBe(true);
  });

  it('reuses the matte for near-identical frames, at most maxReuse times in a row', () => {
    const stab = new MatteStabiliser(W, H, { maxReuse: 3 });
    const img = frame(40, 40);
    expect(stab.analyse(img).reuse).toBe(false);
    stab.update(squareMatte(40, 40));
    const decisions: boolean[] = [];
    for (let t = 0; t < 5; t++) {
      const r = stab.analyse(img).reuse;
      decisions.push(r);
      stab.update(r ? null : squareMatte(40, 40));
    }
    expect(decisions).toEqual([true, true, true, false, true]);
    expect(stab.analyse(frame(44, 40)).reuse).toBe(false);
  });

  it('gives the same mattes when frames are analysed ahead of their updates (frames in flight)', () => {
    const rand = rng(3);
    const frames = Array.from({ length: 12 }, (_, t) => frame(20 + (t < 6 ? t * 4 : 24), 40));
    const raws = frames.map((_, t) => {
      const m = squareMatte(20 + (t < 6 ? t * 4 : 24), 40);
      for (let i = 0; i < m.length; i++) m[i] = Math.max(0, Math.min(255, m[i]! + Math.round((rand() - 0.5) * 60)));
      return m;
    });
    const inOrder = new MatteStabiliser(W, H);
    const expected = frames.map((f, t) => {
      const a = inOrder.analyse(f);
      return { reuse: a.reuse, matte: new Uint8Array(inOrder.update(a.reuse ? null : raws[t]!)) };
    });
    const ahead = new MatteStabiliser(W, H);
    const pending = frames.slice(0, 3).map((f) => ahead.analyse(f));
    for (let t = 0; t < frames.length; t++) {
      const a = pending.shift()!;
      if (t + 3 < frames.length) pending.push(ahead.analyse(frames[t + 3]!));
      expect(a.reuse).toBe(expected[t]!.reuse);
      expect(Buffer.from(ahead.update(a.reuse ? null : raws[t]!, a)).equals(Buffer.from(expected[t]!.matte))).toBe(true);
    }
    // The clip holds still from frame 6: some of those frames were not segmented.
    expect(expected.slice(6).some((e) => e.reuse)).toBe(true);
  });

  it('skips at most every other frame at half cadence when motion is small', () => {
    const stab = new MatteStabiliser(W, H, { reuseBelow: -1, skipBelow: 255 });
    const decisions: boolean[] = [];
    for (let t = 0; t < 6; t++) {
      const a = stab.analyse(frame(40 + t, 40));
      decisions.push(a.reuse);
      stab.update(a.reuse ? null : squareMatte(40 + t, 40), a);
    }
    expect(decisions).toEqual([false, true, false, true, false, true]);
  });
});

describe('compositing', () => {
  it('blends over a colour and attaches alpha', () => {
    const rgb = new Uint8Array([200, 100, 0, 200, 100, 0, 200, 100, 0]);
    const matte = new Uint8Array([255, 128, 0]);
    const over = compositeOver(rgb, matte, parseColor('#00F'), Buffer.alloc(9));
    expect([...over]).toEqual([200, 100, 0, 100, 50, 127, 0, 0, 255]);
    const rgba = attachAlpha(rgb, matte, Buffer.alloc(12));
    expect([...rgba]).toEqual([200, 100, 0, 255, 200, 100, 0, 128, 0, 0, 0, 0]);
    expect(parseColor('#2040c0')).toEqual([0x20, 0x40, 0xc0]);
  });
});

describe('GIF disposal fix', () => {
  it('rewrites every graphic control extension and nothing inside image data', () => {
    // Header, 2x1 screen with a 2-colour global table, then two frames; the first frame's LZW
    // data contains the bytes 0x21 0xF9 which must not be touched.
    const gce = [0x21, 0xf9, 0x04, 0x05, 0x0a, 0x00, 0x01, 0x00];
    const img = (data: number[]) => [0x2c, 0, 0, 0, 0, 2, 0, 1, 0, 0x00, 0x02, data.length, ...data, 0x00];
    const gif = Buffer.from([
      ...Buffer.from('GIF89a'),
      2,
      0,
      1,
      0,
      0x80,
      0,
      0,
      0,
      0,
      0,
      255,
      255,
      255,
      ...gce,
      ...img([0x21, 0xf9, 0x04, 0x05]),
      ...gce,
      ...img([0x44, 0x01]),
      0x3b,
    ]);
    const before = Buffer.from(gif);
    expect(setGifDisposal(gif, 2)).toBe(2);
    const diff = [...gif].map((b, i) => (b !== before[i] ? i : -1)).filter((i) => i >= 0);
    expect(diff).toHaveLength(2);
    for (const i of diff) expect(gif[i]).toBe((0x05 & ~0x1c) | 0x08);
  });
});

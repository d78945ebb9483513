import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { decodeImage } from '../../../src/media/image.js';
import { videoLoop } from '../../../src/ops/video-loop/index.js';
import { prepareLoop } from '../../../src/ops/video-loop/loop.js';
import { fileInput, fixture, runOp, tempDir, type RunOutcome } from '../../helpers.js';
import { decodeFrames, hasFaststart, meanAbsDiff, median, probe, psnr, resizedInput, shrink } from './media.js';

// Small inputs, 480p and 5 s keep each encode to seconds on a shared 2-core machine.
const dir = tempDir('imgtool-loop-');
const brickScene = join(dir, 'sneaker-on-brick.jpg');
const plainScene = join(dir, 'sneaker-on-plain.jpg');

beforeAll(async () => {
  const shoe = await sharp(fixture('cutouts/sneaker.png')).resize(200, 200).toBuffer();
  const brick = await sharp(fixture('textures/brick.png')).resize(640, 480).toBuffer();
  await sharp(brick)
    .composite([{ input: shoe, left: 220, top: 170 }])
    .jpeg({ quality: 95 })
    .toFile(brickScene);
  await sharp({ create: { width: 640, height: 480, channels: 3, background: '#e6e6ea' } })
    .composite([{ input: shoe, left: 220, top: 140 }])
    .jpeg({ quality: 95 })
    .toFile(plainScene);
});

/**
 * Consecutive-frame differences including the wrap from the last frame back to the first,
 * measured on 4x box-averaged frames: a jump or a cut shows at that scale, the codec's grain
 * (which differs between the I-frame and the predicted frames) does not.
 */
function loopDiffs(frames: Buffer[], width: number, height: number): { diffs: number[]; wrap: number } {
  const small = frames.map((f) => shrink(f, width, height));
  const diffs = small.slice(1).map((f, i) => meanAbsDiff(small[i]!, f));
  return { diffs, wrap: meanAbsDiff(small.at(-1)!, small[0]!) };
}

function expectSeamless(frames: Buffer[], width = 640, height = 480): void {
  const { diffs, wrap } = loopDiffs(frames, width, height);
  const med = median([...diffs, wrap]);
  expect(med).toBeGreaterThan(0);
  // A floor of 0.1 grey levels (mean over the frame) keeps a near-static clip's codec grain at
  // the wrap from counting as a jump; a real jump or cut moves the mean by whole levels.
  const limit = Math.max(3 * med, 0.1);
  for (const d of [...diffs, wrap]) expect(d).toBeLessThanOrEqual(limit);
}

function videoStream(p: ReturnType<typeof probe>) {
  return p.streams.find((s) => s.codec_type === 'video')!;
}

describe('video-loop subtle', () => {
  let out: RunOutcome;
  let frames: Buffer[];

  beforeAll(async () => {
    out = await runOp('video-loop', { image: brickScene }, { duration: 5, resolution: '480p', include_audio: true });
    frames = decodeFrames(out.result.file!, 640, 480);
  }, 120_000);

  it('writes H.264 yuv420p MP4 at 480p, 24 fps, exactly 5 s, faststart, AAC audio', () => {
    const p = probe(out.result.file!);
    const v = videoStream(p);
    expect(out.result.ext).toBe('mp4');
    expect(out.result.contentType).toBe('video/mp4');
    expect(v.codec_name).toBe('h264');
    expect(v.pix_fmt).toBe('yuv420p');
    expect(v.height).toBe(480);
    expect(v.width).toBe(640);
    expect(v.r_frame_rate).toBe('24/1');
    expect(Number(v.nb_read_frames)).toBe(120);
    expect(Number(v.duration)).toBeCloseTo(5, 2);
    expect(Math.abs(Number(p.format.duration) - 5)).toBeLessThan(0.05);
    const audio = p.streams.filter((s) => s.codec_type === 'audio');
    expect(audio).toHaveLength(1);
    expect(audio[0]!.codec_name).toBe('aac');
    expect(hasFaststart(readFileSync(out.result.file!))).toBe(true);
    expect(frames).toHaveLength(120);
    expect(out.result.credits).toBe(40);
  });

  it('starts on the input image resized', async () => {
    const want = await resizedInput(brickScene, 640, 480);
    expect(psnr(frames[0]!, want)).toBeGreaterThanOrEqual(35);
  });

  it('loops seamlessly: no consecutive difference (wrap included) above 3x the median', () => {
    expectSeamless(frames);
    expect(psnr(frames.at(-1)!, frames[0]!)).toBeGreaterThanOrEqual(40);
  });

  it('moves the subject but keeps the camera fixed (far background barely changes)', () => {
    // Subject: the pasted shoe occupies x 220..420, y 170..370.
    const inShoe = (p: number) => {
      const x = p % 640,
        y = Math.floor(p / 640);
      return x >= 230 && x < 410 && y >= 180 && y < 360;
    };
    const far = (p: number) => {
      const x = p % 640,
        y = Math.floor(p / 640);
      return x < 150 || x >= 490 || y < 100;
    };
    const subjectPsnr = Math.min(...frames.map((f) => psnr(f, frames[0]!, inShoe)));
    expect(subjectPsnr).toBeLessThan(35);
    for (const f of frames) expect(psnr(f, frames[0]!, far)).toBeGreaterThanOrEqual(40);
  });

  it('reports progress in frames, ending at 1', () => {
    const framesEv = out.progress.filter((e) => e.unit === 'frames');
    expect(framesEv).toHaveLength(120);
    expect(framesEv.at(-1)).toMatchObject({ done: 120, total: 120, fraction: 1 });
    expect(framesEv[0]!.stage).toMatch(/ETA \d+s/);
  });
});

describe('video-loop renderer', () => {
  it('the frame after the last equals the first, which equals the input', async () => {
    const decoded = await decodeImage(fileInput(brickScene), videoLoop.limits, videoLoop.name);
    for (const motion of ['subtle', 'spin'] as const) {
      const loop = await prepareLoop(
        decoded,
        { duration: 5, resolution: '480p', motion, include_audio: false, prompt: 'windy' },
        { signal: new AbortController().signal, warn: () => {} },
      );
      const a = new Uint8ClampedArray(loop.width * loop.height * 3),
        b = new Uint8ClampedArray(a.length),
        mid = new Uint8ClampedArray(a.length);
      loop.render(0, a);
      loop.render(loop.frames, b);
      loop.render(loop.frames / 2, mid);
      expect(psnr(new Uint8Array(b.buffer), new Uint8Array(a.buffer))).toBeGreaterThanOrEqual(40);
      expect(psnr(new Uint8Array(a.buffer), loop.layers.base)).toBeGreaterThanOrEqual(35);
      expect(psnr(new Uint8Array(mid.buffer), new Uint8Array(a.buffer))).toBeLessThan(45);
    }
  }, 120_000);
});

describe('video-loop on a photo, prompt and no audio', () => {
  it('animates the scene, lists ignored directions once and writes no audio stream', async () => {
    const out = await runOp(
      'video-loop',
      { image: fixture('images/butterfly.jpg') },
      {
        duration: 5,
        resolution: '480p',
        prompt: 'gentle breeze in the leaves, slow; zoom in and pan left, add a dog, cut to night',
      },
    );
    const p = probe(out.result.file!);
    expect(p.streams.filter((s) => s.codec_type === 'audio')).toHaveLength(0);
    const v = videoStream(p);
    expect(v.height).toBe(480);
    expect(Number(v.width) % 2).toBe(0);
    const ignored = out.warnings.filter((w) => w.startsWith('prompt directions ignored'));
    expect(ignored).toHaveLength(1);
    expect(ignored[0]).toMatch(/camera movement: "zoom in"/);
    expect(ignored[0]).toMatch(/camera movement: "pan"/);
    expect(ignored[0]).toMatch(/new object: "add a dog"/);
    expect(ignored[0]).toMatch(/cut or transition: "cut to"/);
    expect(out.result.meta?.prompt_words).toEqual(expect.arrayContaining(['gentle', 'breeze', 'leaves', 'slow']));
    const frames = decodeFrames(out.result.file!, Number(v.width), 480);
    expect(frames).toHaveLength(120);
    const want = await resizedInput(fixture('images/butterfly.jpg'), Number(v.width), 480);
    expect(psnr(frames[0]!, want)).toBeGreaterThanOrEqual(35);
    expectSeamless(frames, Number(v.width), 480);
    expect(Math.min(...frames.map((f) => psnr(f, frames[0]!)))).toBeLessThan(40);
  }, 120_000);
});

describe('video-loop spin', () => {
  it('turns an isolated subject in place one full revolution and returns to the start view', async () => {
    const out = await runOp('video-loop', { image: plainScene }, { duration: 5, resolution: '480p', motion: 'spin' });
    expect(out.result.meta).toMatchObject({ spin: 'turntable', motion: 'turntable' });
    const frames = decodeFrames(out.result.file!, 640, 480);
    expect(frames).toHaveLength(120);
    expectSeamless(frames);
    const last = psnr(frames.at(-1)!, frames[0]!),
      half = psnr(frames[60]!, frames[0]!);
    expect(last).toBeGreaterThan(half + 8);
    expect(half).toBeLessThan(25);
    // The backdrop is never touched: corners identical to the first frame throughout.
    const corner = (p: number) => p % 640 < 100 && Math.floor(p / 640) < 80;
    for (const f of frames) expect(psnr(f, frames[0]!, corner)).toBeGreaterThanOrEqual(40);
  }, 120_000);

  it('orbits the camera around a subject in a real setting and returns to the start view', async () => {
    const out = await runOp('video-loop', { image: brickScene }, { duration: 5, resolution: '480p', motion: 'spin' });
    expect(out.result.meta).toMatchObject({ spin: 'orbit' });
    const frames = decodeFrames(out.result.file!, 640, 480);
    expectSeamless(frames);
    const top = (p: number) => Math.floor(p / 640) < 60;
    // The far background moves with the camera...
    expect(psnr(frames[30]!, frames[0]!, top)).toBeLessThan(25);
    // ...and comes back.
    expect(psnr(frames.at(-1)!, frames[0]!)).toBeGreaterThan(psnr(frames[60]!, frames[0]!) + 8);
  }, 120_000);
});

describe('video-loop errors and cancellation', () => {
  it('rejects inputs outside the limits with spec codes', async () => {
    const small = join(dir, 'tiny.png');
    await sharp({ create: { width: 40, height: 40, channels: 3, background: '#888' } })
      .png()
      .toFile(small);
    await expect(runOp('video-loop', { image: small }, { resolution: '480p' })).rejects.toMatchObject({ code: 'image_too_small' });
    const gif = join(dir, 'x.gif');
    await sharp({ create: { width: 80, height: 80, channels: 3, background: '#888' } })
      .gif()
      .toFile(gif);
    await expect(runOp('video-loop', { image: gif }, { resolution: '480p' })).rejects.toMatchObject({ code: 'unsupported_format' });
    await expect(runOp('video-loop', { image: plainScene }, { duration: 4 })).rejects.toMatchObject({ code: 'invalid_parameter' });
  });

  it('cancels mid-render: ffmpeg is killed and no output is left', async () => {
    const ac = new AbortController();
    const pipeline = await videoLoop.load();
    const out = join(dir, 'cancelled.mp4');
    let frames = 0;
    const err = await pipeline(
      {
        operation: 'video-loop',
        inputs: { image: fileInput(plainScene) },
        options: videoLoop.options.parse({ resolution: '480p', motion: 'spin', duration: 15 }),
      },
      {
        signal: ac.signal,
        onProgress: (e) => {
          if (e.unit === 'frames' && ++frames === 10) ac.abort();
        },
        warn: () => {},
        tempPath: () => out,
      },
    ).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'job_cancelled' });
    expect(frames).toBeLessThan(20);
    expect(existsSync(out)).toBe(false);
  }, 60_000);
});

import { readdirSync, statSync, writeFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { fixture, fileInput, runOp, tempDir } from '../../helpers.js';
import { getOperation } from '../../../src/ops/registry.js';
import { parseOptions } from '../../../src/ops/validate.js';
import type { ProgressEvent, RunContext } from '../../../src/ops/define.js';
import { MB } from '../../../src/ops/define.js';
import { probeVideo } from '../../../src/media/probe.js';
import { ffmpeg, frameRgba, meanRgba, probeOut } from './media.js';

/**
 * Every clip is made here from the shared fixtures, small (<= 192x144, about 1 s) so the
 * whole file stays well within its CPU budget: inference dominates, at ~130 frames in all.
 */

const W = 192;
const H = 144;
const FPS = 12;
let dir: string;
let synthetic: string; // apple cut-out sliding over brick, H.264 + AAC: the background is known

async function runIn(outDir: string, input: string, raw: Record<string, unknown>, signal?: AbortSignal, onProgress?: (e: ProgressEvent) => void) {
  const op = getOperation('video-remove-background')!;
  const options = parseOptions(op, raw, 'field');
  const ctx: RunContext = {
    signal: signal ?? new AbortController().signal,
    onProgress: onProgress ?? (() => {}),
    warn: () => {},
    tempPath: (ext) => join(outDir, `${randomUUID()}.${ext}`),
  };
  return (await op.load())({ operation: op.name, inputs: { video: fileInput(input) }, options }, ctx);
}

async function expectError(promise: Promise<unknown>, code: string, text?: RegExp) {
  const err = (await promise.then(
    () => null,
    (e: unknown) => e,
  )) as { code?: string; message?: string } | null;
  expect(err, 'expected an error').not.toBeNull();
  expect(err!.code).toBe(code);
  if (text) expect(err!.message).toMatch(text);
}

beforeAll(() => {
  dir = tempDir('imgtool-vrb-');
  synthetic = join(dir, 'apple.mp4');
  ffmpeg([
    '-loop',
    '1',
    '-i',
    fixture('textures/brick.png'),
    '-loop',
    '1',
    '-i',
    fixture('cutouts/apple.png'),
    '-f',
    'lavfi',
    '-i',
    'sine=frequency=440:sample_rate=44100',
    '-filter_complex',
    `[0]scale=${W}:${H},format=rgb24[bg];[1]scale=72:72[fg];[bg][fg]overlay=x='20+60*t':y=36:shortest=1,format=yuv420p[v]`,
    '-map',
    '[v]',
    '-map',
    '2:a',
    '-t',
    '1',
    '-r',
    String(FPS),
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-c:a',
    'aac',
    synthetic,
  ]);
}, 60_000);

describe('output formats', () => {
  // Frame 6 (t = 0.5 s): the apple covers x 50..122, y 36..108; the bottom strip and the
  // top-right corner are brick only.
  const apple = [78, 64, 16, 16] as const;
  const bgStrip = [4, 116, 180, 24] as const;
  const bgCorner = [150, 4, 36, 24] as const;
  // Last frame: where the apple started (x 20..92) is background again; a GIF without proper
  // disposal would still show it there.
  const trail = [22, 56, 24, 24] as const;

  const cases = [
    { format: 'mp4_h264', bg: undefined, codec: 'h264', pix: /^yuv420p$/, tag: 'avc1', audio: 'aac', color: [255, 255, 255] },
    { format: 'mp4_h265', bg: '#2040C0', codec: 'hevc', pix: /^yuv420p$/, tag: 'hvc1', audio: 'aac', color: [0x20, 0x40, 0xc0] },
    { format: 'mov_h265', bg: '#2040C0', codec: 'hevc', pix: /^yuv420p$/, tag: 'hvc1', audio: 'aac', color: [0x20, 0x40, 0xc0] },
    { format: 'mkv_h264', bg: '#0F0', codec: 'h264', pix: /^yuv420p$/, audio: 'aac', color: [0, 255, 0] },
    { format: 'mkv_h265', bg: '#2040C0', codec: 'hevc', pix: /^yuv420p$/, audio: 'aac', color: [0x20, 0x40, 0xc0] },
    { format: 'mkv_vp9', bg: '#2040C0', codec: 'vp9', pix: /^yuv420p$/, audio: 'opus', color: [0x20, 0x40, 0xc0] },
    { format: 'webm_vp9', bg: undefined, codec: 'vp9', pix: /^yuv420p$/, alphaTag: true, audio: 'opus', color: null },
    { format: 'mov_proresks', bg: undefined, codec: 'prores', pix: /^yuva444p/, tag: 'ap4h', audio: 'aac', color: null },
    { format: 'gif', bg: undefined, codec: 'gif', pix: /./, audio: null, color: null },
  ] as const;

  for (const c of cases) {
    it(`${c.format} ${c.bg ?? '(default background)'}`, async () => {
      const { result, progress, warnings } = await runOp(
        'video-remove-background',
        { video: synthetic },
        { output_format: c.format, ...(c.bg ? { background_color: c.bg } : {}) },
      );
      expect(result.file).toBeTruthy();
      expect(result.ext).toBe(c.format === 'gif' ? 'gif' : c.format.split('_')[0]);
      expect(result.credits).toBe(1);
      expect(result.meta?.frames).toBe(FPS);
      // Keyframe cadence 2: about half the frames inferred, the rest carried along the apple's motion.
      const m = result.meta as { segmentedFrames: number; propagatedFrames: number; reusedFrames: number };
      expect(m.segmentedFrames + m.propagatedFrames + m.reusedFrames).toBe(FPS);
      expect(m.propagatedFrames).toBeGreaterThan(0);
      expect(m.segmentedFrames).toBeGreaterThanOrEqual(FPS / 2);

      const info = probeOut(result.file!);
      const video = info.streams.find((s) => s.codec_type === 'video')!;
      const audio = info.streams.find((s) => s.codec_type === 'audio');
      expect(video.codec_name).toBe(c.codec);
      expect(video.pix_fmt).toMatch(c.pix);
      if ('tag' in c) expect(video.codec_tag_string).toBe(c.tag);
      if ('alphaTag' in c) expect(video.tags?.alpha_mode ?? video.tags?.ALPHA_MODE).toBe('1');
      expect([video.width, video.height]).toEqual([W, H]);
      expect(Math.abs(Number(video.nb_read_frames) - FPS)).toBeLessThanOrEqual(1);
      expect(Math.abs(info.duration - 1)).toBeLessThanOrEqual(1 / FPS + 0.02);
      if (c.audio) expect(audio?.codec_name).toBe(c.audio);
      else {
        expect(audio).toBeUndefined();
        expect(warnings.join(' ')).toMatch(/audio/);
      }
      if (c.format.startsWith('mp4') || c.format.startsWith('mov')) {
        // +faststart: the moov atom comes before mdat so players can start before the end.
        const head = readFileSync(result.file!).subarray(0, 4096).toString('latin1');
        expect(head.indexOf('moov')).toBeGreaterThan(-1);
      }

      const vp9 = c.codec === 'vp9';
      const mid = frameRgba(result.file!, 6, W, H, vp9);
      const fg = meanRgba(mid, W, ...apple);
      if (c.color) {
        for (const region of [bgStrip, bgCorner] as const) {
          const m = meanRgba(mid, W, ...(region as readonly [number, number, number, number]));
          for (let ch = 0; ch < 3; ch++) expect(Math.abs(m[ch]! - c.color[ch]!), `${c.format} background channel ${ch}`).toBeLessThan(20);
        }
        // The apple is red; the background colours used here are not.
        expect(fg[0]).toBeGreaterThan(fg[2]! + 40);
      } else {
        expect(meanRgba(mid, W, ...bgStrip)[3]).toBeLessThan(16);
        expect(meanRgba(mid, W, ...bgCorner)[3]).toBeLessThan(16);
        expect(fg[3]).toBeGreaterThan(240);
        const last = frameRgba(result.file!, FPS - 1, W, H, vp9);
        expect(meanRgba(last, W, ...trail)[3]).toBeLessThan(16);
      }

      const frames = progress.filter((p) => p.unit === 'frames');
      expect(frames.length).toBeGreaterThanOrEqual(FPS);
      expect(frames.at(-1)).toMatchObject({ fraction: 1, done: FPS, total: FPS });
      for (let i = 1; i < frames.length; i++) expect(frames[i]!.fraction).toBeGreaterThanOrEqual(frames[i - 1]!.fraction);
    }, 60_000);
  }

  it('mov_h265 with transparency is unsupported_format (this ffmpeg has no HEVC-alpha encoder), before any work', async () => {
    const out = tempDir('imgtool-vrb-out-');
    await expectError(runIn(out, synthetic, { output_format: 'mov_h265' }), 'unsupported_format', /mov_h265.*alpha.*mov_proresks/);
    await expectError(runIn(out, synthetic, { output_format: 'mov_h265', background_color: 'transparent' }), 'unsupported_format');
    expect(readdirSync(out)).toEqual([]);
  });

  it('transparent with an opaque-only format is invalid_parameter from the schema', async () => {
    await expectError(
      runOp('video-remove-background', { video: synthetic }, { output_format: 'mp4_h264', background_color: 'transparent' }),
      'invalid_parameter',
      /background_color/,
    );
  });
});

describe('accepted inputs', () => {
  const V = (name: string) => fixture(`video/${name}`);
  // Every accepted container/codec, made from the OpenCV sample clips (AVI/Cinepak, AVI/MPEG-4).
  const inputs: Array<{ file: string; args: string[]; codec: string; audio: boolean }> = [
    { file: 'h264.mp4', args: ['-i', V('Megamind.avi'), '-c:v', 'libx264', '-preset', 'ultrafast', '-c:a', 'aac'], codec: 'h264', audio: true },
    {
      file: 'hevc.mov',
      args: ['-i', V('tree.avi'), '-c:v', 'libx265', '-preset', 'ultrafast', '-x265-params', 'log-level=error', '-tag:v', 'hvc1'],
      codec: 'hevc',
      audio: false,
    },
    { file: 'prores.mov', args: ['-i', V('tree.avi'), '-c:v', 'prores_ks', '-profile:v', 'standard'], codec: 'prores', audio: false },
    { file: 'vp8.webm', args: ['-i', V('Megamind.avi'), '-c:v', 'libvpx', '-deadline', 'realtime', '-c:a', 'libopus', '-ac', '2'], codec: 'vp8', audio: true },
    { file: 'vp9.mkv', args: ['-i', V('tree.avi'), '-c:v', 'libvpx-vp9', '-deadline', 'realtime', '-cpu-used', '8'], codec: 'vp9', audio: false },
    {
      file: 'av1.mkv',
      args: ['-i', V('tree.avi'), '-strict', '-2', '-c:v', 'libaom-av1', '-cpu-used', '8', '-crf', '45', '-b:v', '0'],
      codec: 'av1',
      audio: false,
    },
    { file: 'clip.gif', args: ['-i', V('tree.avi')], codec: 'gif', audio: false },
  ];

  for (const input of inputs) {
    it(`${input.file} (${input.codec})`, async () => {
      const src = join(dir, input.file);
      const isGif = input.file.endsWith('.gif');
      ffmpeg([
        '-t',
        '1',
        ...input.args.slice(0, 2),
        '-vf',
        'fps=8,scale=128:96',
        ...(isGif ? [] : ['-pix_fmt', input.codec === 'prores' ? 'yuv422p10le' : 'yuv420p']),
        ...input.args.slice(2),
        src,
      ]);
      const probe = await probeVideo(src);
      expect(probe.codec).toBe(input.codec);
      expect(probe.hasAudio).toBe(input.audio);
      const { result } = await runOp('video-remove-background', { video: src }, { background_color: '#000000' });
      const info = probeOut(result.file!);
      const video = info.streams.find((s) => s.codec_type === 'video')!;
      expect([video.width, video.height]).toEqual([128, 96]);
      expect(Math.abs(Number(video.nb_read_frames) - Math.round(probe.duration * probe.fps))).toBeLessThanOrEqual(1);
      expect(Math.abs(info.duration - probe.duration)).toBeLessThanOrEqual(1 / probe.fps + 0.03);
      expect(info.streams.some((s) => s.codec_type === 'audio')).toBe(input.audio);
    }, 60_000);
  }
});

describe('limits are enforced from the probe, before decoding, with no output', () => {
  const cases: Array<{ name: string; make: (f: string) => void; ext: string; code: string; text: RegExp }> = [
    {
      name: 'a 61 s clip',
      ext: 'mp4',
      code: 'video_too_long',
      text: /61\.0 s.*at most 60 s/,
      make: (f) => ffmpeg(['-f', 'lavfi', '-i', 'color=c=gray:s=64x64:r=1', '-t', '61', '-c:v', 'libx264', '-preset', 'ultrafast', f]),
    },
    {
      name: 'a 4100 px clip',
      ext: 'mp4',
      code: 'image_too_large',
      text: /4100x64.*4096/,
      make: (f) => ffmpeg(['-f', 'lavfi', '-i', 'color=c=gray:s=4100x64:r=1', '-t', '1', '-c:v', 'libx264', '-preset', 'ultrafast', f]),
    },
    {
      name: 'a 48 px clip',
      ext: 'webm',
      code: 'image_too_small',
      text: /48x48.*64x64/,
      make: (f) => ffmpeg(['-f', 'lavfi', '-i', 'color=c=gray:s=48x48:r=5', '-t', '1', '-c:v', 'libvpx', f]),
    },
    {
      name: 'an .avi',
      ext: 'avi',
      code: 'unsupported_format',
      text: /AVI.*MP4, MOV, WebM, MKV, GIF/,
      make: (f) => ffmpeg(['-i', fixture('video/tree.avi'), '-t', '0.5', '-c', 'copy', f]),
    },
    {
      name: 'MPEG-4 Part 2 in MP4',
      ext: 'mp4',
      code: 'unsupported_format',
      text: /mpeg4.*H\.264/,
      make: (f) => ffmpeg(['-i', fixture('video/tree.avi'), '-t', '0.5', '-c:v', 'mpeg4', f]),
    },
    {
      name: 'a corrupted file',
      ext: 'mp4',
      code: 'invalid_video',
      text: /not a readable video/,
      make: (f) => {
        // A real MP4 with its header bytes overwritten: the container can no longer be parsed.
        ffmpeg(['-f', 'lavfi', '-i', 'testsrc=s=128x96:r=8', '-t', '1', '-c:v', 'libx264', '-preset', 'ultrafast', f]);
        const buf = readFileSync(f);
        for (let i = 0; i < 64; i++) buf[i] = (i * 37) & 255;
        writeFileSync(f, buf);
      },
    },
    { name: 'an empty file', ext: 'mp4', code: 'invalid_video', text: /empty/, make: (f) => writeFileSync(f, '') },
  ];

  for (const c of cases) {
    it(c.name, async () => {
      const src = join(dir, `limit-${randomUUID()}.${c.ext}`);
      c.make(src);
      const out = tempDir('imgtool-vrb-out-');
      await expectError(runIn(out, src, {}), c.code, c.text);
      expect(readdirSync(out)).toEqual([]);
    }, 30_000);
  }

  it('a file over 100 MB is file_size_too_large without being read', async () => {
    const out = tempDir('imgtool-vrb-out-');
    const op = getOperation('video-remove-background')!;
    const ctx: RunContext = { signal: new AbortController().signal, onProgress: () => {}, warn: () => {}, tempPath: (ext) => join(out, `x.${ext}`) };
    const input = { name: 'huge.mp4', path: synthetic, size: 100 * MB + 1 };
    await expectError(
      (await op.load())({ operation: op.name, inputs: { video: input }, options: parseOptions(op, {}, 'field') }, ctx),
      'file_size_too_large',
      /huge\.mp4 is 100\.0 MB.*at most 100\.0 MB/,
    );
    expect(readdirSync(out)).toEqual([]);
  });
});

describe('cancellation', () => {
  for (const format of ['mp4_h264', 'gif'] as const) {
    it(`stops ffmpeg and leaves no partial file (${format})`, async () => {
      const out = tempDir('imgtool-vrb-out-');
      const ac = new AbortController();
      const seen: ProgressEvent[] = [];
      const onProgress = (e: ProgressEvent) => {
        seen.push(e);
        if ((e.done ?? 0) >= 3) ac.abort();
      };
      await expectError(runIn(out, synthetic, { output_format: format }, ac.signal, onProgress), 'job_cancelled');
      expect(seen.at(-1)!.done).toBeLessThan(FPS);
      expect(readdirSync(out)).toEqual([]);
    }, 60_000);
  }
});

describe('probeVideo', () => {
  it('tells MP4 from MOV and WebM from MKV, and counts frames where the container does not store them', async () => {
    const mp4 = await probeVideo(synthetic);
    expect(mp4).toMatchObject({
      container: 'mp4',
      codec: 'h264',
      width: W,
      height: H,
      fps: FPS,
      frameCount: FPS,
      hasAudio: true,
      audioCodec: 'aac',
      rotation: 0,
    });
    expect(mp4.duration).toBeCloseTo(1, 1);
    const mov = join(dir, 'remux.mov');
    const mkv = join(dir, 'remux.mkv');
    const webm = join(dir, 'remux.webm');
    ffmpeg(['-i', synthetic, '-c', 'copy', mov]);
    ffmpeg(['-i', synthetic, '-c', 'copy', mkv]);
    ffmpeg(['-i', synthetic, '-an', '-c:v', 'libvpx', '-deadline', 'realtime', webm]);
    expect((await probeVideo(mov)).container).toBe('mov');
    expect(await probeVideo(mkv)).toMatchObject({ container: 'mkv', frameCount: FPS });
    expect(await probeVideo(webm)).toMatchObject({ container: 'webm', codec: 'vp8', frameCount: FPS, hasAudio: false });
    expect(statSync(webm).size).toBeGreaterThan(0);
  });
});

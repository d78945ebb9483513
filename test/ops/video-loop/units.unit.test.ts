import { describe, expect, it } from 'vitest';
import { ambientLoop, SAMPLE_RATE } from '../../../src/ops/video-loop/audio.js';
import { loopZones } from '../../../src/ops/video-loop/encode.js';
import { outputSize } from '../../../src/ops/video-loop/loop.js';
import { cyclesFor, DEFAULT_MOTION, readPrompt } from '../../../src/ops/video-loop/prompt.js';

describe('prompt vocabulary', () => {
  it('scales motions by the words it knows', () => {
    const { params, applied, ignored } = readPrompt('Strong wind through the leaves, fast');
    expect(ignored).toEqual([]);
    expect(applied).toEqual(['strong', 'wind', 'leaves', 'fast']);
    expect(params.foliage).toBeGreaterThan(DEFAULT_MOTION.foliage * 3);
    expect(params.periodScale).toBeLessThan(1);
    expect(readPrompt('gentle breathing, slowly').params.breathing).toBeCloseTo(DEFAULT_MOTION.breathing * 2 * 0.6);
    expect(readPrompt('slowly').params.periodScale).toBeGreaterThan(1);
  });

  it('lists camera moves, cuts, new objects and scene changes as ignored, and they do not steer motion', () => {
    const r = readPrompt('camera pans slowly to the left, then cut to a beach; a bird flies in; day to night');
    expect(r.ignored.join(' | ')).toMatch(/camera movement: "camera pans"/);
    expect(r.ignored.join(' | ')).toMatch(/cut or transition/);
    expect(r.ignored.join(' | ')).toMatch(/new object: "bird flies in"/);
    expect(r.ignored.join(' | ')).toMatch(/scene change: "day to night"/);
    expect(readPrompt('water ripples').ignored).toEqual([]);
  });

  it('keeps amplitudes bounded and cycles whole', () => {
    const r = readPrompt('wind wind windy breeze gusty strong wild stormy dramatic');
    expect(r.params.foliage).toBeLessThanOrEqual(DEFAULT_MOTION.foliage * 4);
    expect(cyclesFor(5, 4.5)).toBe(1);
    expect(cyclesFor(15, 2.5)).toBe(6);
    expect(cyclesFor(5, 20)).toBe(1);
  });
});

describe('output geometry and encoding', () => {
  it('uses the asked height and an even width from the aspect', () => {
    expect(outputSize(1920, 1080, '1080p')).toEqual({ width: 1920, height: 1080 });
    expect(outputSize(512, 512, '768p')).toEqual({ width: 768, height: 768 });
    expect(outputSize(1001, 667, '480p').width % 2).toBe(0);
    expect(() => outputSize(6000, 64, '1080p')).toThrow(/crop it/);
  });

  it('ramps the quantiser into the loop point', () => {
    const z = loopZones(120, 16).split('/');
    expect(z[0]).toBe('0,0,q=6');
    expect(z.at(-1)).toBe('119,119,q=6');
    expect(z).toHaveLength(17);
  });
});

describe('ambient audio', () => {
  it('is quiet, exactly as long as the clip, and continues from its end into its start', () => {
    const s = ambientLoop({ durationSec: 5, seed: 3 });
    expect(s.length).toBe(5 * SAMPLE_RATE * 2);
    let sq = 0,
      step = 0;
    for (let i = 0; i < s.length; i++) sq += s[i]! * s[i]!;
    for (let i = 2; i < s.length; i += 2) step += Math.abs(s[i]! - s[i - 2]!);
    const rms = Math.sqrt(sq / s.length);
    expect(20 * Math.log10(rms)).toBeCloseTo(-30, 0);
    const meanStep = step / (s.length / 2 - 1);
    // The wrap sample-to-sample step is an ordinary step, not a click.
    expect(Math.abs(s[0]! - s[s.length - 2]!)).toBeLessThan(4 * meanStep);
    expect(Math.abs(s[1]! - s[s.length - 1]!)).toBeLessThan(4 * meanStep);
  });
});

describe('subject fallback without models', () => {
  it('finds a subject on a plain backdrop by colour distance, and none in a busy scene', async () => {
    const { backdropEstimate } = await import('../../../src/ops/video-loop/subject.js');
    const w = 64,
      h = 48,
      plain = Buffer.alloc(w * h * 3, 230);
    for (let y = 10; y < 30; y++) for (let x = 20; x < 40; x++) plain.set([200, 40, 40], (y * w + x) * 3);
    const s = backdropEstimate({ data: plain, width: w, height: h, channels: 3 })!;
    expect(s.alpha[20 * w + 30]).toBe(255);
    expect(s.alpha[2 * w + 2]).toBe(0);
    const busy = Buffer.from(Array.from({ length: w * h * 3 }, (_, i) => (i * 37) % 256));
    expect(backdropEstimate({ data: busy, width: w, height: h, channels: 3 })).toBeNull();
  });
});

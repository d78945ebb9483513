import { seededRandom } from '../../media/random.js';
import { writeFile } from 'node:fs/promises';

/**
 * A quiet ambient bed (soft wind/room tone) that loops seamlessly: noise shaped by filters run
 * circularly, so the filter state at the end flows into the start, and a slow swell with a
 * whole number of cycles per clip. The last sample therefore continues into the first.
 */

export const SAMPLE_RATE = 48000;
/** Target loudness: about -30 dBFS RMS, a background bed rather than a soundtrack. */
const TARGET_RMS = 10 ** (-30 / 20);

/** One-pole low-pass run around the buffer twice so its output is periodic in the buffer. */
function circularLowpass(x: Float32Array, cutoffHz: number): Float32Array {
  const k = 1 - Math.exp((-2 * Math.PI * cutoffHz) / SAMPLE_RATE);
  const y = new Float32Array(x.length);
  let s = 0;
  for (let pass = 0; pass < 2; pass++) {
    for (let i = 0; i < x.length; i++) {
      s += k * (x[i]! - s);
      y[i] = s;
    }
  }
  return y;
}

export interface AmbientOptions {
  durationSec: number;
  seed: number;
  /** Brighter, more rushing tone for water prompts. */
  water?: boolean;
  /** Stronger swell for wind prompts. */
  wind?: boolean;
}

/** Interleaved stereo float samples in -1..1, exactly durationSec long. */
export function ambientLoop(o: AmbientOptions): Float32Array {
  const n = Math.round(o.durationSec * SAMPLE_RATE);
  const rand = seededRandom(o.seed ^ 0x5eed);
  const channels: Float32Array[] = [];
  const swellCycles = Math.max(1, Math.round(o.durationSec / 4));
  for (let ch = 0; ch < 2; ch++) {
    const white = new Float32Array(n);
    for (let i = 0; i < n; i++) white[i] = rand() * 2 - 1;
    // Band-limited noise: a low-pass pair shapes the tone; subtracting a much lower low-pass
    // removes rumble and DC (a circular band-pass).
    const top = o.water ? 2400 : 900;
    const lp = circularLowpass(circularLowpass(white, top), top * 1.5);
    const low = circularLowpass(lp, 60);
    const phase = rand() * 2 * Math.PI;
    const depth = o.wind ? 0.6 : 0.35;
    const out = new Float32Array(n);
    for (let i = 0; i < n; i++) {
      const swell = 1 - depth / 2 + (depth / 2) * Math.sin((2 * Math.PI * swellCycles * i) / n + phase);
      out[i] = (lp[i]! - low[i]!) * swell;
    }
    channels.push(out);
  }
  let sq = 0;
  for (const c of channels) for (let i = 0; i < n; i++) sq += c[i]! * c[i]!;
  const gain = TARGET_RMS / Math.sqrt(sq / (2 * n) || 1);
  const inter = new Float32Array(n * 2);
  for (let i = 0; i < n; i++) {
    inter[i * 2] = channels[0]![i]! * gain;
    inter[i * 2 + 1] = channels[1]![i]! * gain;
  }
  return inter;
}

/** 16-bit PCM stereo WAV. */
export async function writeWav(path: string, samples: Float32Array): Promise<void> {
  const frames = samples.length / 2;
  const buf = Buffer.alloc(44 + samples.length * 2);
  buf.write('RIFF', 0, 'latin1');
  buf.writeUInt32LE(36 + samples.length * 2, 4);
  buf.write('WAVEfmt ', 8, 'latin1');
  buf.writeUInt32LE(16, 16);
  buf.writeUInt16LE(1, 20);
  buf.writeUInt16LE(2, 22);
  buf.writeUInt32LE(SAMPLE_RATE, 24);
  buf.writeUInt32LE(SAMPLE_RATE * 4, 28);
  buf.writeUInt16LE(4, 32);
  buf.writeUInt16LE(16, 34);
  buf.write('data', 36, 'latin1');
  buf.writeUInt32LE(frames * 4, 40);
  for (let i = 0; i < samples.length; i++) buf.writeInt16LE(Math.max(-32768, Math.min(32767, Math.round(samples[i]! * 32767))), 44 + i * 2);
  await writeFile(path, buf);
}

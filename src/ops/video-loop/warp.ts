import type { Layers } from './layers.js';
import { activeSceneCells, allocFields, fieldsAt, type Fields, type MotionModel } from './motion.js';

/**
 * Renders subtle-mode frames: the background plate warped by the scene field (with gain for
 * shimmer), then the premultiplied subject warped by its own field composited over it. Both
 * fields live on the coarse mesh and are interpolated bilinearly per pixel (a mesh warp);
 * cells whose scene field is zero everywhere are copied straight from the plate.
 */

const reflect = (v: number, max: number) => (v < 0 ? -v : v > max ? 2 * max - v : v);

export class SubtleRenderer {
  private readonly fields: Fields;
  private readonly active: Uint8Array;
  private readonly rows: Record<'sx' | 'sy' | 'bx' | 'by' | 'bg', Float32Array>;

  constructor(
    private readonly layers: Layers,
    private readonly model: MotionModel,
  ) {
    this.fields = allocFields(model.grid);
    this.active = activeSceneCells(model);
    const gw = model.grid.gw;
    this.rows = { sx: new Float32Array(gw), sy: new Float32Array(gw), bx: new Float32Array(gw), by: new Float32Array(gw), bg: new Float32Array(gw) };
  }

  /** Renders loop phase phi (radians, 0..2pi) into `out` (RGB; clamped so gains cannot wrap). */
  render(phi: number, out: Uint8ClampedArray): void {
    const { width, height, plate, subject, alpha, box } = this.layers;
    const { cell, gw } = this.model.grid;
    const f = fieldsAt(this.model, phi, this.fields);
    const rows = this.rows;
    const interpRow = (src: Float32Array, dst: Float32Array, j0: number, fy: number) => {
      const a = j0 * gw,
        b = a + gw;
      for (let i = 0; i < gw; i++) dst[i] = src[a + i]! * (1 - fy) + src[b + i]! * fy;
    };
    const maxX = width - 1,
      maxY = height - 1;

    for (let y = 0; y < height; y++) {
      const j0 = Math.floor(y / cell),
        fy = (y - j0 * cell) / cell;
      const rowStart = y * width * 3;
      let rowsReady = false;
      for (let i0 = 0; i0 * cell < width; i0++) {
        const xs = i0 * cell,
          xe = Math.min(width, xs + cell);
        if (!this.active[j0 * gw + i0]) {
          out.set(plate.subarray(rowStart + xs * 3, rowStart + xe * 3), rowStart + xs * 3);
          continue;
        }
        if (!rowsReady) {
          interpRow(f.bx, rows.bx, j0, fy);
          interpRow(f.by, rows.by, j0, fy);
          interpRow(f.bg, rows.bg, j0, fy);
          rowsReady = true;
        }
        const bx0 = rows.bx[i0]!,
          bx1 = rows.bx[i0 + 1]!,
          by0 = rows.by[i0]!,
          by1 = rows.by[i0 + 1]!,
          g0 = rows.bg[i0]!,
          g1 = rows.bg[i0 + 1]!;
        for (let x = xs; x < xe; x++) {
          const fx = (x - xs) / cell;
          const sx = reflect(x - (bx0 + (bx1 - bx0) * fx), maxX);
          const sy = reflect(y - (by0 + (by1 - by0) * fx), maxY);
          const gain = 1 + g0 + (g1 - g0) * fx;
          const x0 = Math.min(maxX - 1, Math.floor(sx)),
            y0 = Math.min(maxY - 1, Math.floor(sy));
          const tx = sx - x0,
            ty = sy - y0;
          const p00 = (y0 * width + x0) * 3,
            p01 = p00 + width * 3;
          const o = rowStart + x * 3;
          for (let c = 0; c < 3; c++) {
            const top = plate[p00 + c]! + (plate[p00 + 3 + c]! - plate[p00 + c]!) * tx;
            const bot = plate[p01 + c]! + (plate[p01 + 3 + c]! - plate[p01 + c]!) * tx;
            out[o + c] = (top + (bot - top) * ty) * gain;
          }
        }
      }
    }

    if (!box) return;
    const pad = this.model.subjectReach + cell;
    const yA = Math.max(0, box.y0 - pad),
      yB = Math.min(maxY, box.y1 + pad);
    const xA = Math.max(0, box.x0 - pad),
      xB = Math.min(maxX, box.x1 + pad);
    for (let y = yA; y <= yB; y++) {
      const j0 = Math.floor(y / cell),
        fy = (y - j0 * cell) / cell;
      interpRow(f.sx, rows.sx, j0, fy);
      interpRow(f.sy, rows.sy, j0, fy);
      const rowStart = y * width * 3;
      for (let x = xA; x <= xB; x++) {
        const i0 = Math.floor(x / cell),
          fx = (x - i0 * cell) / cell;
        const sx = x - (rows.sx[i0]! + (rows.sx[i0 + 1]! - rows.sx[i0]!) * fx);
        const sy = y - (rows.sy[i0]! + (rows.sy[i0 + 1]! - rows.sy[i0]!) * fx);
        if (sx < 0 || sy < 0 || sx > maxX || sy > maxY) continue;
        const x0 = Math.min(maxX - 1, Math.floor(sx)),
          y0 = Math.min(maxY - 1, Math.floor(sy));
        const tx = sx - x0,
          ty = sy - y0;
        const q00 = y0 * width + x0,
          q01 = q00 + width;
        const w00 = (1 - tx) * (1 - ty),
          w10 = tx * (1 - ty),
          w01 = (1 - tx) * ty,
          w11 = tx * ty;
        const a = (alpha[q00]! * w00 + alpha[q00 + 1]! * w10 + alpha[q01]! * w01 + alpha[q01 + 1]! * w11) / 255;
        if (a <= 0.001) continue;
        const o = rowStart + x * 3,
          p00 = q00 * 3,
          p01 = q01 * 3;
        for (let c = 0; c < 3; c++) {
          const s = subject[p00 + c]! * w00 + subject[p00 + 3 + c]! * w10 + subject[p01 + c]! * w01 + subject[p01 + 3 + c]! * w11;
          out[o + c] = s + out[o + c]! * (1 - a);
        }
      }
    }
  }
}

import { seededRandom } from '../../media/random.js';
import sharp from 'sharp';
import { MATERIALS, type Material } from './materials.js';
import { clamp01 } from './noise.js';
import type { Rgb, SceneSpec, Tint } from './scenes.js';
import { throwIfAborted } from '../../errors.js';

/**
 * Renders a scene as a photograph: a pinhole camera 30 cm above a table, looking at a wall
 * 150 cm away. Each pixel is traced to the table or the wall, shaded in linear light by the key
 * light (Lambert with inverse-square falloff, Blinn-Phong sheen on glossy tops) and the ambient
 * fill (darkened in the corner where table meets wall), tone-mapped, and finally blurred by a
 * thin-lens depth of field focused on the subject's standing point.
 */

export const CAMERA_HEIGHT = 30;
export const WALL_DISTANCE = 150;
/** Focal length in px for a 1024 canvas: about a 40 degree field of view, a "product" lens. */
export const FOCAL_PER_PX = 1.37;

export interface Layout {
  size: number;
  f: number;
  cx: number;
  /** Row of the horizon (vanishing line of the table). */
  yv: number;
  /** Row where the table meets the wall. */
  yj: number;
  /** Depth (cm) of the subject's standing point: the focus plane. */
  zs: number;
  /** Subject's standing point on the canvas. */
  baseX: number;
  baseY: number;
  /** World position of the key light. */
  light: [number, number, number];
  /** Unit vector from the subject towards the light. */
  lightDir: [number, number, number];
}

/**
 * Fits the table to the subject: the table/wall line sits where the scene prefers it unless the
 * subject's base would then stand on the wall, in which case the line moves up.
 */
export function makeLayout(spec: SceneSpec, size: number, baseX: number, baseY: number): Layout {
  const f = FOCAL_PER_PX * size;
  const margin = 0.06 * size;
  const yj = Math.max(0.12 * size, Math.min(spec.junction * size, baseY - margin));
  const yv = yj - (CAMERA_HEIGHT * f) / WALL_DISTANCE;
  const zs = baseY > yj ? (CAMERA_HEIGHT * f) / (baseY - yv) : WALL_DISTANCE;
  const xs = ((baseX - size / 2) * zs) / f;
  const az = (spec.light.azimuth * Math.PI) / 180;
  const el = (Math.max(3, Math.min(88, spec.light.elevation)) * Math.PI) / 180;
  const R = 160;
  let lx = xs + R * Math.cos(el) * Math.sin(az);
  const ly = R * Math.sin(el);
  // A backlight cannot sit behind the wall; it is pulled in front of it.
  let lz = Math.min(WALL_DISTANCE - 8, zs - R * Math.cos(el) * Math.cos(az));
  if (!Number.isFinite(lx)) lx = xs;
  if (!Number.isFinite(lz)) lz = zs;
  const d = Math.hypot(lx - xs, ly, lz - zs);
  return {
    size, f, cx: size / 2, yv, yj, zs, baseX, baseY,
    light: [lx, ly, lz],
    lightDir: [(lx - xs) / d, ly / d, (lz - zs) / d],
  };
}

const LUT = 4096;
// Transfer curves by table: two pow() per channel per pixel were a third of the render time.
const LIN_LUT = Float32Array.from({ length: LUT + 1 }, (_, i) => {
  const c = i / LUT;
  return c <= 0.04045 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4);
});
const SRGB_LUT = Float32Array.from({ length: LUT + 1 }, (_, i) => {
  const c = i / LUT;
  return c <= 0.0031308 ? c * 12.92 : 1.055 * Math.pow(c, 1 / 2.4) - 0.055;
});
const toLinear = (c: number) => LIN_LUT[Math.round(clamp01(c) * LUT)]!;
const toSrgb = (c: number) => SRGB_LUT[Math.round(clamp01(c) * LUT)]!;

function tinted(out: Float32Array, tint: Tint | undefined) {
  if (!tint || tint.amount <= 0) return;
  const l = 0.2126 * out[0]! + 0.7152 * out[1]! + 0.0722 * out[2]!;
  const tl = Math.max(0.05, 0.2126 * tint.rgb[0] + 0.7152 * tint.rgb[1] + 0.0722 * tint.rgb[2]);
  // Keep the material's luminance pattern but pull it towards the tint's own brightness a
  // little, so "black marble" is dark and not a grey-tinted white.
  const target = l * (0.55 + 0.45 * (tl / 0.75));
  for (let c = 0; c < 3; c++) {
    const col = (tint.rgb[c]! / tl) * target;
    out[c] = clamp01(out[c]! + (col - out[c]!) * tint.amount);
  }
}

/** Window panes (2x2) thrown on the wall by the key light, soft-edged. */
function windowLight(X: number, Y: number, cxWin: number, softness: number): number {
  const w = 34;
  const h = 46;
  const bar = 2.2;
  const u = X - cxWin;
  const v = Y - 38;
  const soft = 1.5 + softness * 6;
  const edge = (d: number) => clamp01(0.5 + d / soft);
  const outer = edge(w - Math.abs(u)) * edge(h - Math.abs(v));
  const bars = 1 - (1 - edge(Math.abs(u) - bar)) - (1 - edge(Math.abs(v) - bar));
  return outer * clamp01(bars);
}

/** Blur levels of the depth-of-field stack (Gaussian sigma, px). */
const DOF_LEVELS = [0, 1.2, 2.6, 4.8, 8, 12.5];

export interface RenderedScene {
  /** 8-bit sRGB, 3 channels, size x size. */
  rgb: Buffer;
  /** Per-pixel irradiance ratio key / (key + ambient), for tinting shadows. */
  keyShare: Float32Array;
  layout: Layout;
}

export async function renderScene(spec: SceneSpec, layout: Layout, seed: number, signal?: AbortSignal): Promise<RenderedScene> {
  const { size, f, cx, yv, yj, zs } = layout;
  const floorMat: Material = MATERIALS[spec.floor];
  const wallMat: Material = MATERIALS[spec.wall];
  const lin = new Float32Array(size * size * 3);
  const keyShare = new Float32Array(size * size);
  const coc = new Float32Array(size * size);
  const alb = new Float32Array(4);
  const [Lx, Ly, Lz] = layout.light;
  const key = spec.light;
  const kc = key.color.map((c) => c * key.intensity) as Rgb;
  const amb = spec.ambient.color.map((c) => c * spec.ambient.intensity) as Rgb;
  const R2 = 160 * 160;
  const shin = 12 + (1 - key.softness) * 60;
  // The window faces the light: its patch lands on the wall on the far side from the light.
  const winX = -(Lx - (layout.baseX - cx) * (zs / f)) * 0.35;
  const floorSeed = seed;
  const wallSeed = (seed ^ 0x5bd1e995) >>> 0;
  const fpWall = WALL_DISTANCE / f;
  const blurMax = spec.blur;

  for (let y = 0; y < size; y++) {
    if ((y & 63) === 0) throwIfAborted(signal);
    const onFloor = y + 0.5 > yj;
    const z = onFloor ? (CAMERA_HEIGHT * f) / (y + 0.5 - yv) : WALL_DISTANCE;
    const fp = onFloor ? (z / f) * Math.max(1, z / CAMERA_HEIGHT) : fpWall;
    const rowCoc = (blurMax * Math.abs(z - zs)) / z;
    // Rows the depth of field will blur by sigma >= 2.5 px are shaded at half resolution
    // (2x2 blocks); the blur erases the difference and it halves the cost of the backdrop.
    const coarse = rowCoc >= 2.5;
    if (coarse && (y & 1) === 1 && y > 0) {
      const prevCoarse = onFloor ? (blurMax * Math.abs(CAMERA_HEIGHT * f / (y - 0.5 - yv) - zs)) / (CAMERA_HEIGHT * f / (y - 0.5 - yv)) >= 2.5 : true;
      const prevOnFloor = y - 0.5 > yj;
      if (prevCoarse && prevOnFloor === onFloor) {
        lin.copyWithin(y * size * 3, (y - 1) * size * 3, y * size * 3);
        keyShare.copyWithin(y * size, (y - 1) * size, y * size);
        coc.fill(rowCoc, y * size, (y + 1) * size);
        continue;
      }
    }
    for (let x = 0; x < size; x++) {
      const i = y * size + x;
      if (coarse && (x & 1) === 1) {
        lin[i * 3] = lin[i * 3 - 3]!; lin[i * 3 + 1] = lin[i * 3 - 2]!; lin[i * 3 + 2] = lin[i * 3 - 1]!;
        keyShare[i] = keyShare[i - 1]!;
        coc[i] = rowCoc;
        continue;
      }
      const X = ((x + 0.5 - cx) * z) / f;
      let Px: number, Py: number, Pz: number, nx: number, ny: number, nz: number;
      if (onFloor) {
        floorMat(X, z, fp, floorSeed, alb);
        tinted(alb, spec.floorTint);
        Px = X; Py = 0; Pz = z; nx = 0; ny = 1; nz = 0;
      } else {
        const Y = CAMERA_HEIGHT - ((y + 0.5 - yv) * WALL_DISTANCE) / f;
        wallMat(X, Y, fpWall, wallSeed, alb);
        tinted(alb, spec.wallTint);
        Px = X; Py = Y; Pz = WALL_DISTANCE; nx = 0; ny = 0; nz = -1;
      }
      const lx = Lx - Px, ly = Ly - Py, lz = Lz - Pz;
      const d2 = lx * lx + ly * ly + lz * lz;
      const dl = Math.sqrt(d2);
      const cosT = Math.max(0, (lx * nx + ly * ny + lz * nz) / dl);
      // A large source flattens the inverse-square falloff.
      const fall = Math.pow(R2 / d2, 1 - key.softness * 0.45);
      let direct = cosT * fall;
      if (!onFloor && spec.window) {
        const Y = CAMERA_HEIGHT - ((y + 0.5 - yv) * WALL_DISTANCE) / f;
        direct = direct * 0.45 + 0.9 * windowLight(X, Y, winX, key.softness) * Math.max(0.3, cosT * 1.5);
      }
      // Ambient occlusion of the corner where the table meets the wall.
      const distCorner = onFloor ? WALL_DISTANCE - z : (CAMERA_HEIGHT - ((y + 0.5 - yv) * WALL_DISTANCE) / f);
      const ao = 1 - 0.38 * Math.exp(-Math.max(0, distCorner) / 9);
      let spec_ = 0;
      const gloss = alb[3]!;
      if (gloss > 0 && onFloor) {
        // Blinn-Phong half vector between light and camera (camera at (0, H, 0)).
        const vx = -Px, vy = CAMERA_HEIGHT - Py, vz = -Pz;
        const vl = Math.hypot(vx, vy, vz);
        const hx = lx / dl + vx / vl, hy = ly / dl + vy / vl, hz = lz / dl + vz / vl;
        const hl = Math.hypot(hx, hy, hz);
        spec_ = gloss * 0.35 * Math.pow(Math.max(0, hy / hl), shin) * fall;
      }
      const keyIrr = direct;
      keyShare[i] = keyIrr / (keyIrr + spec.ambient.intensity * ao + 1e-6);
      for (let c = 0; c < 3; c++) {
        const a = toLinear(alb[c]!);
        lin[i * 3 + c] = (a * (kc[c]! * direct + amb[c]! * ao) + spec_ * kc[c]!) * spec.exposure;
      }
      coc[i] = rowCoc;
    }
  }
  throwIfAborted(signal);

  // Tone map (Reinhard with a white point), grade, vignette, back to 8-bit sRGB.
  const white2 = 2.2 * 2.2;
  const rgb = Buffer.alloc(size * size * 3);
  const sat = spec.saturation;
  const con = spec.contrast;
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const i = y * size + x;
      const dx = (x - cx) / size, dy = (y - size / 2) / size;
      const vig = 1 - spec.vignette * Math.min(1, (dx * dx + dy * dy) * 2.2);
      let r = lin[i * 3]! * vig, g = lin[i * 3 + 1]! * vig, b = lin[i * 3 + 2]! * vig;
      r = (r * (1 + r / white2)) / (1 + r);
      g = (g * (1 + g / white2)) / (1 + g);
      b = (b * (1 + b / white2)) / (1 + b);
      let sr = toSrgb(r), sg = toSrgb(g), sb = toSrgb(b);
      const l = 0.299 * sr + 0.587 * sg + 0.114 * sb;
      sr = l + (sr - l) * sat; sg = l + (sg - l) * sat; sb = l + (sb - l) * sat;
      sr = 0.5 + (sr - 0.5) * con; sg = 0.5 + (sg - 0.5) * con; sb = 0.5 + (sb - 0.5) * con;
      rgb[i * 3] = Math.round(clamp01(sr) * 255);
      rgb[i * 3 + 1] = Math.round(clamp01(sg) * 255);
      rgb[i * 3 + 2] = Math.round(clamp01(sb) * 255);
    }
  }
  throwIfAborted(signal);
  const out = await depthOfField(rgb, size, coc);
  addSensorNoise(out, size, seed);
  return { rgb: out, keyShare, layout };
}

/** Per-pixel blur by circle of confusion, interpolated between a stack of Gaussian blurs. */
async function depthOfField(rgb: Buffer, size: number, coc: Float32Array): Promise<Buffer> {
  const raw = { raw: { width: size, height: size, channels: 3 as const } };
  const levels = await Promise.all(
    DOF_LEVELS.map((s) => (s === 0 ? Promise.resolve(rgb) : sharp(rgb, raw).blur(s).raw().toBuffer())),
  );
  const out = Buffer.alloc(rgb.length);
  const last = DOF_LEVELS.length - 1;
  for (let i = 0; i < size * size; i++) {
    const s = Math.min(coc[i]!, DOF_LEVELS[last]!);
    let k = 0;
    while (k < last - 1 && DOF_LEVELS[k + 1]! < s) k++;
    const t = Math.min(1, Math.max(0, (s - DOF_LEVELS[k]!) / (DOF_LEVELS[k + 1]! - DOF_LEVELS[k]!)));
    const a = levels[k]!, b = levels[k + 1]!;
    for (let c = 0; c < 3; c++) out[i * 3 + c] = Math.round(a[i * 3 + c]! + (b[i * 3 + c]! - a[i * 3 + c]!) * t);
  }
  return out;
}

/** Fine luminance grain so flat, blurred areas read as photographed, not rendered. */
function addSensorNoise(rgb: Buffer, size: number, seed: number) {
  const rand = seededRandom(seed ^ 0x1234567);
  for (let i = 0; i < size * size; i++) {
    const n = (rand() + rand() - 1) * 3.2;
    for (let c = 0; c < 3; c++) {
      const v = rgb[i * 3 + c]! + n;
      rgb[i * 3 + c] = v < 0 ? 0 : v > 255 ? 255 : Math.round(v);
    }
  }
}

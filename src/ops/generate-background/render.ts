import { hash2, seededRandom } from '../../media/random.js';
import sharp from 'sharp';
import { MATERIALS, type Material } from './materials.js';
import { clamp01, fbm, smoothstep } from './noise.js';
import { skyAt, skylineAt, skylineHeight } from './sky.js';
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

export interface Podium {
  shape: 'cylinder' | 'block';
  cx: number;
  /** Centre row of the top ellipse, its radii, and the centre row of the bottom ellipse. */
  topY: number;
  rx: number;
  ry: number;
  bottomY: number;
}

export interface Layout {
  size: number;
  f: number;
  cx: number;
  /** Row of the horizon (vanishing line of the ground). */
  yv: number;
  /** Row where the table meets the wall (the horizon itself in open scenes). */
  yj: number;
  /** Depth (cm) of the subject's standing point: the focus plane. */
  zs: number;
  /** Subject's standing point on the canvas. */
  baseX: number;
  baseY: number;
  /** World position of the key light (very far away for the sun in open scenes). */
  light: [number, number, number];
  /** Unit vector from the subject towards the light. */
  lightDir: [number, number, number];
  podium?: Podium;
}

/**
 * Fits the ground to the subject: the table/wall line (or the horizon outdoors) sits where the
 * scene prefers it unless the subject's base would then stand on the wall or in the sky, in
 * which case the line moves up. A podium goes under the subject and the floor under the podium.
 */
export function makeLayout(spec: SceneSpec, size: number, baseX: number, baseY: number, subjectWidth = size * 0.3): Layout {
  const f = FOCAL_PER_PX * size;
  const margin = 0.06 * size;
  let podium: Podium | undefined;
  let standY = baseY;
  if (spec.podium) {
    const rx = Math.max(0.1 * size, Math.min(0.42 * size, subjectWidth * 0.62));
    const ry = rx * 0.16;
    const topY = baseY - ry * 0.25;
    const bottomY = Math.max(topY + ry, Math.min(size * 0.95 - ry, baseY + Math.max(0.15 * size, rx * 0.9)));
    podium = { shape: spec.podium.shape, cx: baseX, topY, rx, ry, bottomY };
    standY = bottomY + ry;
  }
  let yv: number, yj: number, zs: number;
  if (spec.setting === 'open') {
    yv = Math.max(0.06 * size, Math.min(spec.junction * size, standY - margin));
    yj = yv;
    zs = (CAMERA_HEIGHT * f) / Math.max(1, standY - yv);
  } else {
    yj = Math.max(0.12 * size, Math.min(spec.junction * size, standY - margin));
    yv = yj - (CAMERA_HEIGHT * f) / WALL_DISTANCE;
    zs = standY > yj ? (CAMERA_HEIGHT * f) / (standY - yv) : WALL_DISTANCE;
  }
  const xs = ((baseX - size / 2) * zs) / f;
  const az = (spec.light.azimuth * Math.PI) / 180;
  const el = (Math.max(3, Math.min(88, spec.light.elevation)) * Math.PI) / 180;
  if (spec.setting === 'open') {
    // The sun: a direction, not a place.
    const dir: [number, number, number] = [Math.cos(el) * Math.sin(az), Math.sin(el), -Math.cos(el) * Math.cos(az)];
    const far = 1e6;
    return { size, f, cx: size / 2, yv, yj, zs, baseX, baseY, light: [xs + dir[0] * far, dir[1] * far, zs + dir[2] * far], lightDir: dir, podium };
  }
  const R = 160;
  let lx = xs + R * Math.cos(el) * Math.sin(az);
  const ly = R * Math.sin(el);
  // A backlight cannot sit behind the wall; it is pulled in front of it.
  let lz = Math.min(WALL_DISTANCE - 8, zs - R * Math.cos(el) * Math.cos(az));
  if (!Number.isFinite(lx)) lx = xs;
  if (!Number.isFinite(lz)) lz = zs;
  const d = Math.hypot(lx - xs, ly, lz - zs);
  return {
    size,
    f,
    cx: size / 2,
    yv,
    yj,
    zs,
    baseX,
    baseY,
    light: [lx, ly, lz],
    lightDir: [(lx - xs) / d, ly / d, (lz - zs) / d],
    podium,
  };
}

const LUT = 4096;
// Transfer curves by table: two pow() per channel per pixel were a third of the render time.
const LIN_LUT = Float32Array.from({ length: LUT + 1 }, (_, i) => {
  const c = i / LUT;
  return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
});
const SRGB_LUT = Float32Array.from({ length: LUT + 1 }, (_, i) => {
  const c = i / LUT;
  return c <= 0.0031308 ? c * 12.92 : 1.055 * c ** (1 / 2.4) - 0.055;
});
const toLinear = (c: number) => LIN_LUT[Math.round(clamp01(c) * LUT)]!;
const toSrgb = (c: number) => SRGB_LUT[Math.round(clamp01(c) * LUT)]!;

function tinted(out: Float32Array, tint: Tint | undefined) {
  if (!tint || tint.amount <= 0) return;
  const l = 0.2126 * out[0]! + 0.7152 * out[1]! + 0.0722 * out[2]!;
  const tl = Math.max(0.05, 0.2126 * tint.rgb[0] + 0.7152 * tint.rgb[1] + 0.0722 * tint.rgb[2]);
  // Keep the material's luminance pattern but pull it towards the tint's own brightness, so
  // "black marble" and "navy drapes" are dark and not a grey-tinted white.
  const target = l * Math.min(1.1, 0.3 + 0.7 * (tl / 0.75));
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

/** Relative distance of each skyline, for haze (1 = on the horizon). */
const SKYLINE_DISTANCE: Record<SceneSpec['skyline'], number> = {
  none: 1,
  trees: 0.45,
  forest: 0.2,
  hedge: 0.25,
  dunes: 1,
  city: 0.6,
  rocks: 0.9,
  hills: 1,
  snowhills: 1,
  pines: 0.8,
  palms: 0.5,
};

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
  const open = spec.setting === 'open';
  const sweep = spec.setting === 'sweep';
  const floorMat: Material = MATERIALS[spec.floor];
  const wallMat: Material = MATERIALS[spec.wall];
  const farMat: Material | undefined = spec.far ? MATERIALS[spec.far.material] : undefined;
  const lin = new Float32Array(size * size * 3);
  const keyShare = new Float32Array(size * size);
  const coc = new Float32Array(size * size);
  const alb = new Float32Array(4);
  const skyC = new Float32Array(3);
  const sl = new Float32Array(8);
  const [Lx, Ly, Lz] = layout.light;
  const [dLx, dLy, dLz] = layout.lightDir;
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
  const sky = spec.sky;
  // Gaps in a canopy look up at the sky overhead: no cloud shapes, no sunset glow, the zenith's colour.
  const gapSky =
    sky && (spec.skyline === 'forest' || spec.skyline === 'trees')
      ? { ...sky, clouds: 0, glowAmount: 0, horizon: [0, 1, 2].map((c) => sky.horizon[c]! + (sky.zenith[c]! - sky.horizon[c]!) * 0.6) as Rgb }
      : undefined;
  const night = !!sky && sky.zenith[0] + sky.zenith[1] + sky.zenith[2] < 0.3;
  // Where the sun glows in the sky: only when it is in front of the camera (a backlight).
  const az = (key.azimuth * Math.PI) / 180;
  const sunX = Math.cos(az) < 0 ? 0.5 + Math.sin(az) * 0.42 : 0.5 + Math.sign(Math.sin(az) || 1) * 1.3;
  const skyGain = 1.35;
  const horizonLin: Rgb = sky ? [toLinear(sky.horizon[0]), toLinear(sky.horizon[1]), toLinear(sky.horizon[2])] : [0.5, 0.5, 0.5];
  const sweepBand = 0.09 * size;
  const pod = layout.podium;
  const podTop = pod ? pod.topY - pod.ry - 1 : -1;
  const podBottom = pod ? pod.bottomY + pod.ry + 1 : -1;
  const podMat = spec.podium ? MATERIALS[spec.podium.material] : undefined;
  // Skyline heights per column, once.
  const skyline = new Float32Array(size);
  if (open) for (let x = 0; x < size; x++) skyline[x] = skylineHeight(spec.skyline, x / size, seed) * size;

  for (let y = 0; y < size; y++) {
    if ((y & 63) === 0) throwIfAborted(signal);
    const isSky = open && y + 0.5 <= yv + 0.5;
    const onFloor = open ? !isSky : y + 0.5 > yj;
    const z = isSky ? 1e6 : onFloor ? Math.min(1e6, (CAMERA_HEIGHT * f) / Math.max(0.5, y + 0.5 - yv)) : WALL_DISTANCE;
    const fp = onFloor ? (z / f) * Math.max(1, z / CAMERA_HEIGHT) : fpWall;
    const rowCoc = isSky ? blurMax : (blurMax * Math.abs(z - zs)) / z;
    const podRow = y >= podTop && y <= podBottom;
    // Rows the depth of field will blur by sigma >= 2.5 px are shaded at half resolution
    // (2x2 blocks); the blur erases the difference and it halves the cost of the backdrop.
    const coarse = rowCoc >= 2.5 && !podRow;
    if (coarse && (y & 1) === 1 && y > 0) {
      const py = y - 1;
      const pSky = open && py + 0.5 <= yv + 0.5;
      const pOnFloor = open ? !pSky : py + 0.5 > yj;
      const pz = pSky ? 1e6 : pOnFloor ? (CAMERA_HEIGHT * f) / Math.max(0.5, py + 0.5 - yv) : WALL_DISTANCE;
      const prevCoarse = (pSky ? blurMax : (blurMax * Math.abs(pz - zs)) / pz) >= 2.5 && !(py >= podTop && py <= podBottom);
      if (prevCoarse && pOnFloor === onFloor && pSky === isSky) {
        lin.copyWithin(y * size * 3, (y - 1) * size * 3, y * size * 3);
        keyShare.copyWithin(y * size, (y - 1) * size, y * size);
        coc.fill(rowCoc, y * size, (y + 1) * size);
        continue;
      }
    }
    for (let x = 0; x < size; x++) {
      const i = y * size + x;
      if (coarse && (x & 1) === 1) {
        lin[i * 3] = lin[i * 3 - 3]!;
        lin[i * 3 + 1] = lin[i * 3 - 2]!;
        lin[i * 3 + 2] = lin[i * 3 - 1]!;
        keyShare[i] = keyShare[i - 1]!;
        coc[i] = rowCoc;
        continue;
      }
      if (pod && podRow && shadePodium(x, y)) continue;
      if (isSky) {
        shadeSky(i, x, y);
        coc[i] = rowCoc;
        continue;
      }
      const X = ((x + 0.5 - cx) * z) / f;
      let Px: number, Py: number, Pz: number, nx: number, ny: number, nz: number;
      let foam = 0;
      if (onFloor) {
        let mat = floorMat;
        let tint = spec.floorTint;
        if (farMat && spec.far) {
          // The far zone's edge wanders a little (a shoreline, a pool's lip seen from low).
          // A negative distance is measured behind the subject (a pool's edge right behind the product).
          const edge = (spec.far.from < 0 ? zs - spec.far.from : spec.far.from) + (spec.far.shore ? (fbm(X * 0.004, 0.5, seed + 61, 3, 0) - 0.5) * 120 : 0);
          if (z > edge) {
            mat = farMat;
            tint = spec.far.tint;
          } else if (spec.far.shore && z > edge - 90) foam = 1 - (edge - z) / 90;
        }
        mat(X, z, fp, floorSeed, alb);
        tinted(alb, tint);
        if (foam > 0) {
          // Wet sand darkens towards the water; a line of foam where the wave ends.
          const wetK = 1 - 0.3 * foam;
          alb[0] *= wetK;
          alb[1] *= wetK;
          alb[2] *= wetK;
          const line = Math.exp(-(((1 - foam) * 14) ** 2)) * 0.9;
          alb[0] += (0.95 - alb[0]!) * line;
          alb[1] += (0.96 - alb[1]!) * line;
          alb[2] += (0.96 - alb[2]!) * line;
        }
        if (spec.props && z < 600) scatter(X, z, fp, alb);
        if (spec.wet) {
          alb[0] *= 0.7;
          alb[1] *= 0.7;
          alb[2] *= 0.72;
          alb[3] = Math.max(alb[3]!, 0.55);
        }
        Px = X;
        Py = 0;
        Pz = z;
        nx = 0;
        ny = 1;
        nz = 0;
      } else {
        const Y = CAMERA_HEIGHT - ((y + 0.5 - yv) * WALL_DISTANCE) / f;
        wallMat(X, Y, fpWall, wallSeed, alb);
        tinted(alb, spec.wallTint);
        Px = X;
        Py = Y;
        Pz = WALL_DISTANCE;
        nx = 0;
        ny = 0;
        nz = -1;
      }
      if (sweep && Math.abs(y + 0.5 - yj) < sweepBand) {
        // A paper sweep curves from floor to wall: the normal turns gradually, no corner.
        const t = smoothstep(yj - sweepBand, yj + sweepBand, y + 0.5);
        const nl = Math.hypot(t, 1 - t);
        nx = 0;
        ny = t / nl;
        nz = -(1 - t) / nl;
      }
      let lx: number, ly: number, lz: number, dl: number, fall: number;
      if (open) {
        lx = dLx;
        ly = dLy;
        lz = dLz;
        dl = 1;
        fall = 1;
      } else {
        lx = Lx - Px;
        ly = Ly - Py;
        lz = Lz - Pz;
        const d2 = lx * lx + ly * ly + lz * lz;
        dl = Math.sqrt(d2);
        // A large source flattens the inverse-square falloff.
        fall = (R2 / d2) ** (1 - key.softness * 0.45);
      }
      const cosT = Math.max(0, (lx * nx + ly * ny + lz * nz) / dl);
      let direct = cosT * fall;
      if (!onFloor && spec.window) {
        const Y = CAMERA_HEIGHT - ((y + 0.5 - yv) * WALL_DISTANCE) / f;
        direct = direct * 0.45 + 0.9 * windowLight(X, Y, winX, key.softness) * Math.max(0.3, cosT * 1.5);
      }
      // Ambient occlusion of the corner where the table meets the wall (none in a sweep or outdoors).
      let ao = 1;
      if (spec.setting === 'room') {
        const distCorner = onFloor ? WALL_DISTANCE - z : CAMERA_HEIGHT - ((y + 0.5 - yv) * WALL_DISTANCE) / f;
        ao = 1 - 0.38 * Math.exp(-Math.max(0, distCorner) / 9);
      }
      if (pod && onFloor) {
        // The podium's own contact shadow on the floor.
        const ex = (x + 0.5 - pod.cx) / (pod.rx * 1.08),
          ey = (y + 0.5 - pod.bottomY) / (pod.ry * 1.6);
        const dd = Math.sqrt(ex * ex + ey * ey);
        if (dd < 2.2) ao *= 1 - 0.45 * Math.max(0, Math.min(1, (2.2 - dd) / 1.2));
      }
      let spec_ = 0;
      const gloss = alb[3]!;
      let refl = 0;
      if (gloss > 0 && onFloor) {
        // Blinn-Phong half vector between light and camera (camera at (0, H, 0)).
        const vx = -Px,
          vy = CAMERA_HEIGHT - Py,
          vz = -Pz;
        const vl = Math.hypot(vx, vy, vz);
        const hx = lx / dl + vx / vl,
          hy = ly / dl + vy / vl,
          hz = lz / dl + vz / vl;
        const hl = Math.hypot(hx, hy, hz);
        spec_ = gloss * 0.35 * Math.max(0, hy / hl) ** shin * fall;
        // Outdoors, glossy ground (water, wet street) mirrors the sky at grazing angles (Fresnel).
        if (open && sky) refl = gloss * 0.7 * (0.02 + 0.98 * (1 - vy / vl) ** 5);
      }
      const keyIrr = direct;
      keyShare[i] = keyIrr / (keyIrr + spec.ambient.intensity * ao + 1e-6);
      for (let c = 0; c < 3; c++) {
        const a = toLinear(alb[c]!);
        let v = (a * (kc[c]! * direct + amb[c]! * ao) + spec_ * kc[c]!) * (1 - refl) + refl * horizonLin[c]! * skyGain;
        if (spec.haze > 0 && onFloor && open) v += (horizonLin[c]! * skyGain - v) * spec.haze * (1 - Math.exp(-z / 2500));
        lin[i * 3 + c] = v * spec.exposure;
      }
      if (spec.gradient && !onFloor) {
        // A graded backdrop: darker towards the top of the frame.
        const g = 1 - spec.gradient * (1 - (y + 0.5) / Math.max(1, yj));
        lin[i * 3] *= g;
        lin[i * 3 + 1] *= g;
        lin[i * 3 + 2] *= g;
      }
      coc[i] = rowCoc;
    }
  }
  throwIfAborted(signal);

  /** Sky and skyline for an open scene's pixel above the horizon. */
  function shadeSky(i: number, x: number, y: number) {
    const h = (yv - (y + 0.5)) / size;
    const xn = (x + 0.5) / size;
    const top = skyline[x]! / size;
    // Through gaps in a canopy the sky shows as light, not as cloud shapes.
    if (sky) skyAt(top > 0 && h < top && gapSky ? gapSky : sky, xn, h, sunX, seed, skyC);
    else {
      skyC[0] = 0.7;
      skyC[1] = 0.8;
      skyC[2] = 0.9;
    }
    let r = toLinear(skyC[0]!) * skyGain,
      g = toLinear(skyC[1]!) * skyGain,
      b = toLinear(skyC[2]!) * skyGain;
    if (top > 0 && h < top) {
      skylineAt(spec.skyline, xn, h, top, seed, night, sl);
      if (spec.skylineTint) {
        alb[0] = sl[0]!;
        alb[1] = sl[1]!;
        alb[2] = sl[2]!;
        tinted(alb, spec.skylineTint);
        sl[0] = alb[0]!;
        sl[1] = alb[1]!;
        sl[2] = alb[2]!;
      }
      const cover = sl[7]!;
      const lit = Math.max(0.25, dLy) * 0.7;
      // Aerial perspective grows with distance: trees at the edge of a clearing barely fade, hills on the horizon do.
      const hz = (spec.haze * 0.8 + 0.08) * SKYLINE_DISTANCE[spec.skyline];
      for (let c = 0; c < 3; c++) {
        let v = toLinear(sl[c]!) * (kc[c]! * lit + amb[c]!) + sl[3]! * toLinear(sl[4 + c]!) * 1.6;
        v += (horizonLin[c]! * skyGain - v) * hz * (sl[3]! > 0 ? 0.2 : 1);
        const s = c === 0 ? r : c === 1 ? g : b;
        const m = s + (v - s) * cover;
        if (c === 0) r = m;
        else if (c === 1) g = m;
        else b = m;
      }
    }
    lin[i * 3] = r * spec.exposure;
    lin[i * 3 + 1] = g * spec.exposure;
    lin[i * 3 + 2] = b * spec.exposure;
    keyShare[i] = 0;
  }

  /** A podium under the subject: a cylinder or block, in focus, lit by the key. */
  function shadePodium(x: number, y: number): boolean {
    const p = pod!;
    const px = x + 0.5,
      py = y + 0.5;
    const u = (px - p.cx) / p.rx;
    if (Math.abs(u) > 1) return false;
    const i = y * size + x;
    let nx = 0,
      ny = 0,
      nz = -1;
    const curve = p.shape === 'cylinder' ? Math.sqrt(1 - u * u) : 1;
    const topFace = p.shape === 'cylinder' ? Math.hypot(u, (py - p.topY) / p.ry) <= 1 : Math.abs(py - p.topY) <= p.ry;
    if (topFace) {
      ny = 1;
      nz = 0;
    } else if (py > p.topY && py <= p.bottomY + p.ry * curve) {
      if (p.shape === 'cylinder') {
        nx = u;
        nz = -curve;
      } else if (py > p.bottomY + p.ry) return false;
    } else return false;
    podMat!(u * 30, topFace ? ((py - p.topY) / p.ry) * 5 : (py - p.topY) * 0.1, 0.05, seed + 77, alb);
    tinted(alb, spec.podium!.tint);
    const [lx, ly, lz] = layout.lightDir;
    const cosT = Math.max(0, lx * nx + ly * ny + lz * nz);
    // Cylinder edges darken (grazing view and light); the top is the brightest face under a high key.
    const rim = p.shape === 'cylinder' && !topFace ? 0.75 + 0.25 * curve : 1;
    for (let c = 0; c < 3; c++) lin[i * 3 + c] = toLinear(alb[c]!) * (kc[c]! * cosT * 1.1 + amb[c]! * rim) * spec.exposure;
    keyShare[i] = cosT / (cosT + spec.ambient.intensity + 1e-6);
    coc[i] = 0;
    return true;
  }

  /** Petals, leaves, flowers, pebbles or shells lying on the ground, one chance per 8 cm cell. */
  function scatter(X: number, z: number, fp: number, out: Float32Array) {
    const props = spec.props!;
    const cs = 9;
    const ci = Math.floor(X / cs),
      cj = Math.floor(z / cs);
    if (hash2(ci, cj, seed + 101) > props.density) return;
    const h1 = hash2(ci, cj, seed + 102),
      h2 = hash2(ci, cj, seed + 103),
      h3 = hash2(ci, cj, seed + 104);
    const r = (props.kind === 'leaves' ? 3.2 : props.kind === 'flowers' ? 2.6 : props.kind === 'petals' ? 2.2 : 1.6) * (0.75 + 0.5 * h3);
    const ox = (ci + 0.5 + (h1 - 0.5) * 0.5) * cs,
      oz = (cj + 0.5 + (h2 - 0.5) * 0.5) * cs;
    const th = h3 * Math.PI * 2;
    const dx = X - ox,
      dz = z - oz;
    const lu = dx * Math.cos(th) + dz * Math.sin(th),
      lv = -dx * Math.sin(th) + dz * Math.cos(th);
    let inside: number;
    const soft = Math.max(fp, 0.1);
    if (props.kind === 'flowers') {
      const ang = Math.atan2(lv, lu);
      const rr = r * (0.55 + 0.45 * Math.abs(Math.cos(ang * 2.5)));
      inside = clamp01((rr - Math.hypot(lu, lv)) / soft);
      if (inside <= 0) return;
      const centre = Math.hypot(lu, lv) < r * 0.25;
      const pal: Rgb[] = [
        [0.97, 0.96, 0.94],
        [0.95, 0.75, 0.82],
        [0.96, 0.85, 0.3],
      ];
      const col: Rgb = centre ? [0.95, 0.72, 0.15] : pal[Math.floor(h1 * pal.length)]!;
      mixInto(out, col, inside);
      return;
    }
    const a = props.kind === 'leaves' ? r : props.kind === 'shells' ? r * 0.8 : r;
    const b = props.kind === 'leaves' ? r * 0.45 : props.kind === 'pebbles' ? r * 0.7 : r * 0.6;
    const e = Math.hypot(lu / a, lv / b);
    inside = clamp01(((1 - e) * Math.min(a, b)) / soft);
    if (inside <= 0) return;
    const palettes: Record<string, Rgb[]> = {
      petals: [
        [0.96, 0.7, 0.78],
        [0.98, 0.9, 0.92],
        [0.85, 0.25, 0.32],
        [0.97, 0.82, 0.86],
      ],
      leaves: [
        [0.72, 0.42, 0.14],
        [0.82, 0.6, 0.2],
        [0.45, 0.55, 0.2],
        [0.6, 0.25, 0.12],
      ],
      pebbles: [
        [0.62, 0.6, 0.57],
        [0.45, 0.44, 0.43],
        [0.75, 0.72, 0.67],
      ],
      shells: [
        [0.96, 0.9, 0.84],
        [0.93, 0.8, 0.72],
      ],
    };
    const pal = palettes[props.kind]!;
    let col = pal[Math.floor(h2 * pal.length)]!;
    // "red rose petals": the named colour, varied a little by the palette's own light and dark.
    if (props.colour) col = [props.colour[0] * (0.85 + 0.3 * h1), props.colour[1] * (0.85 + 0.3 * h1), props.colour[2] * (0.85 + 0.3 * h1)];
    // A midrib on leaves, a soft gradient on petals: enough to read as objects when sharp.
    const shade = props.kind === 'leaves' ? 1 - 0.25 * Math.exp(-((lv / (b * 0.12)) ** 2)) : 0.9 + 0.1 * (1 - e);
    mixInto(out, [col[0] * shade, col[1] * shade, col[2] * shade], inside);
  }

  // Tone map (Reinhard with a white point), grade, vignette, back to 8-bit sRGB.
  const white2 = 2.2 * 2.2;
  const rgb = Buffer.alloc(size * size * 3);
  const sat = spec.saturation;
  const con = spec.contrast;
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const i = y * size + x;
      const dx = (x - cx) / size,
        dy = (y - size / 2) / size;
      const vig = 1 - spec.vignette * Math.min(1, (dx * dx + dy * dy) * 2.2);
      let r = lin[i * 3]! * vig,
        g = lin[i * 3 + 1]! * vig,
        b = lin[i * 3 + 2]! * vig;
      r = (r * (1 + r / white2)) / (1 + r);
      g = (g * (1 + g / white2)) / (1 + g);
      b = (b * (1 + b / white2)) / (1 + b);
      let sr = toSrgb(r),
        sg = toSrgb(g),
        sb = toSrgb(b);
      const l = 0.299 * sr + 0.587 * sg + 0.114 * sb;
      sr = l + (sr - l) * sat;
      sg = l + (sg - l) * sat;
      sb = l + (sb - l) * sat;
      sr = 0.5 + (sr - 0.5) * con;
      sg = 0.5 + (sg - 0.5) * con;
      sb = 0.5 + (sb - 0.5) * con;
      rgb[i * 3] = Math.round(clamp01(sr) * 255);
      rgb[i * 3 + 1] = Math.round(clamp01(sg) * 255);
      rgb[i * 3 + 2] = Math.round(clamp01(sb) * 255);
    }
  }
  throwIfAborted(signal);
  const out = await depthOfField(rgb, size, coc);
  if (spec.bokeh) addBokeh(out, size, spec.bokeh, open ? yv : yj, seed);
  addSensorNoise(out, size, seed);
  return { rgb: out, keyShare, layout };
}

function mixInto(out: Float32Array, col: Rgb, t: number) {
  out[0] = out[0]! + (col[0] - out[0]!) * t;
  out[1] = out[1]! + (col[1] - out[1]!) * t;
  out[2] = out[2]! + (col[2] - out[2]!) * t;
  out[3] = out[3]! * (1 - t) + 0.1 * t;
}

/**
 * Out-of-focus highlights: point lights far behind the focus plane become discs the size of
 * the lens's blur, brighter at the rim (as real bokeh often is), added over the backdrop.
 */
function addBokeh(rgb: Buffer, size: number, b: NonNullable<SceneSpec['bokeh']>, horizon: number, seed: number) {
  const rand = seededRandom(seed ^ 0xb0e4);
  const scale = size / 1024;
  for (let k = 0; k < b.count; k++) {
    const cx = rand() * size;
    // Most lights sit near the horizon (street level), fewer higher up.
    const cy = horizon - rand() ** 1.6 * horizon * 0.95 + (rand() - 0.3) * 0.08 * size;
    const r = b.size * (0.55 + rand() * 0.9) * scale;
    const col = b.colours[Math.floor(rand() * b.colours.length)]!;
    const amt = b.strength * (0.45 + rand() * 0.55);
    const x0 = Math.max(0, Math.floor(cx - r - 1)),
      x1 = Math.min(size - 1, Math.ceil(cx + r + 1));
    const y0 = Math.max(0, Math.floor(cy - r - 1)),
      y1 = Math.min(size - 1, Math.ceil(cy + r + 1));
    for (let y = y0; y <= y1; y++) {
      for (let x = x0; x <= x1; x++) {
        const d = Math.hypot(x + 0.5 - cx, y + 0.5 - cy) / r;
        if (d >= 1.05) continue;
        const disc = clamp01((1.05 - d) / 0.1) * (0.75 + 0.25 * d * d);
        const i = (y * size + x) * 3;
        for (let c = 0; c < 3; c++) {
          // Screen blend: light adds, never darkens, never clips harshly.
          const v = rgb[i + c]! / 255,
            l = col[c]! * amt * disc;
          rgb[i + c] = Math.round((1 - (1 - v) * (1 - l)) * 255);
        }
      }
    }
  }
}

/** Per-pixel blur by circle of confusion, interpolated between a stack of Gaussian blurs. */
async function depthOfField(rgb: Buffer, size: number, coc: Float32Array): Promise<Buffer> {
  const raw = { raw: { width: size, height: size, channels: 3 as const } };
  const levels = await Promise.all(DOF_LEVELS.map((s) => (s === 0 ? Promise.resolve(rgb) : sharp(rgb, raw).blur(s).raw().toBuffer())));
  const out = Buffer.alloc(rgb.length);
  const last = DOF_LEVELS.length - 1;
  for (let i = 0; i < size * size; i++) {
    const s = Math.min(coc[i]!, DOF_LEVELS[last]!);
    let k = 0;
    while (k < last - 1 && DOF_LEVELS[k + 1]! < s) k++;
    const t = Math.min(1, Math.max(0, (s - DOF_LEVELS[k]!) / (DOF_LEVELS[k + 1]! - DOF_LEVELS[k]!)));
    const a = levels[k]!,
      b = levels[k + 1]!;
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

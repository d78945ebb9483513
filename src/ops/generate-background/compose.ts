import sharp from 'sharp';
import { gaussianBlur } from '../../media/filters.js';
import type { RawImage } from '../../media/image.js';
import { throwIfAborted } from '../../errors.js';
import type { Layout } from './render.js';
import type { SceneSpec } from './scenes.js';
import { MATERIAL_REFLECT } from './prompt.js';

/**
 * Puts the cut-out into the scene: placement by image_transform, a cast shadow sheared away
 * from the key light, contact occlusion where the subject meets the table, and light wrap
 * (the blurred background bleeding over the outermost edge pixels) so the edge does not look
 * pasted. The subject's colour and brightness follow the scene light (subjectGrade); a glossy
 * ground mirrors it.
 */

export interface Placement {
  /** Placed layer on the canvas: premultiplication-free RGBA, canvas-sized. */
  rgba: Buffer;
  size: number;
  /** Layer rectangle on the canvas (may extend past the canvas). */
  left: number;
  top: number;
  width: number;
  height: number;
  /** Subject bounding box on the canvas (alpha > 0), clipped to the canvas. */
  bbox: { x0: number; y0: number; x1: number; y1: number } | null;
  /** Lowest opaque row and the mean column of the subject's lowest band: where it stands. */
  baseX: number;
  baseY: number;
}

export interface Transform {
  scale: number;
  x_center: number;
  y_center: number;
}

/**
 * Scale is the layer's longer side as a fraction of the canvas side (1 = fits the canvas
 * exactly); x_center, y_center put the layer's centre at that fraction of the canvas.
 */
export async function placeLayer(layer: RawImage, t: Transform, size: number): Promise<Placement> {
  const longer = Math.max(layer.width, layer.height);
  const k = (t.scale * size) / longer;
  const width = Math.max(1, Math.round(layer.width * k));
  const height = Math.max(1, Math.round(layer.height * k));
  const left = Math.round(t.x_center * size - width / 2);
  const top = Math.round(t.y_center * size - height / 2);
  const src =
    layer.channels === 4
      ? layer.data
      : await sharp(layer.data, { raw: { width: layer.width, height: layer.height, channels: 3 } })
          .ensureAlpha()
          .raw()
          .toBuffer();
  // sharp premultiplies alpha while resampling, so edge colours do not pick up the hidden background.
  const resized = await sharp(src, { raw: { width: layer.width, height: layer.height, channels: 4 } })
    .resize(width, height, { kernel: k < 1 ? 'lanczos3' : 'mitchell', fit: 'fill' })
    .raw()
    .toBuffer();
  const rgba = Buffer.alloc(size * size * 4);
  let x0 = size,
    y0 = size,
    x1 = -1,
    y1 = -1;
  for (let y = Math.max(0, top); y < Math.min(size, top + height); y++) {
    const sy = y - top;
    for (let x = Math.max(0, left); x < Math.min(size, left + width); x++) {
      const s = (sy * width + (x - left)) * 4;
      const d = (y * size + x) * 4;
      const a = resized[s + 3]!;
      if (a === 0) continue;
      rgba[d] = resized[s]!;
      rgba[d + 1] = resized[s + 1]!;
      rgba[d + 2] = resized[s + 2]!;
      rgba[d + 3] = a;
      if (a > 8) {
        if (x < x0) x0 = x;
        if (x > x1) x1 = x;
        if (y < y0) y0 = y;
        if (y > y1) y1 = y;
      }
    }
  }
  const bbox = x1 >= 0 ? { x0, y0, x1, y1 } : null;
  let baseX = size / 2;
  let baseY = Math.min(size - 1, Math.round(t.y_center * size + height / 2));
  if (bbox) {
    baseY = bbox.y1;
    // The footprint: columns opaque in the lowest 4% of the subject.
    const band = Math.max(2, Math.round((bbox.y1 - bbox.y0) * 0.04));
    let sx = 0,
      n = 0;
    for (let y = bbox.y1 - band; y <= bbox.y1; y++)
      for (let x = bbox.x0; x <= bbox.x1; x++)
        if (rgba[(y * size + x) * 4 + 3]! > 128) {
          sx += x;
          n++;
        }
    baseX = n ? sx / n : (bbox.x0 + bbox.x1) / 2;
  }
  return { rgba, size, left, top, width, height, bbox, baseX, baseY };
}

/**
 * Shadow darkness 0..1 per canvas pixel. The subject is treated as a cut-out standing upright
 * at its base row: each silhouette pixel at height hp above the base lands on the table at
 * base + hp * (kx, ky), the shear given by the light's direction projected through the camera.
 * Softness grows with distance from the contact (penumbra), and a tight occlusion band hugs the
 * footprint whatever the light.
 */
export function shadowMap(p: Placement, layout: Layout, spec: SceneSpec): Float32Array {
  const { size } = p;
  const out = new Float32Array(size * size);
  if (!p.bbox) return out;
  const { x0, y0, x1, y1 } = p.bbox;
  const subjH = Math.max(1, y1 - y0 + 1);
  const subjW = Math.max(1, x1 - x0 + 1);
  const [dx, dy, dz] = layout.lightDir;
  const tanEl = Math.max(0.25, dy / Math.max(1e-3, Math.hypot(dx, dz)));
  const hd = Math.hypot(dx, dz) || 1;
  // Shadow runs away from the light, on the table's plane seen in perspective.
  // Per pixel of height above the base: sideways shift, and vertical shift of a table point
  // moved in depth (rows per cm of depth at the base are (baseY - yv) / zs; heights are zs / f cm per px).
  let kx = -dx / hd / tanEl;
  let ky = (dz / hd / tanEl) * ((p.baseY - layout.yv) / layout.f);
  kx = Math.max(-2, Math.min(2, kx));
  ky = Math.max(-1, Math.min(1, ky));

  const soft = spec.light.softness;
  const sNear = 1.5 + soft * 4 + subjW * 0.006;
  const sFar = 6 + soft * 22 + subjW * 0.04;
  const sAo = 2 + subjW * 0.012;
  const sAoWide = 8 + subjW * 0.06;
  // Work only in the window the shadow can reach: blurs over the whole canvas were most of
  // the compositing time.
  const pad = Math.ceil(3 * Math.max(sFar, sAoWide)) + 2;
  const rx0 = Math.max(0, Math.floor(Math.min(x0, x0 + kx * subjH)) - pad);
  const rx1 = Math.min(size - 1, Math.ceil(Math.max(x1, x1 + kx * subjH)) + pad);
  const ry0 = Math.max(0, Math.floor(Math.min(p.baseY, p.baseY + ky * subjH)) - pad);
  const ry1 = Math.min(size - 1, Math.ceil(Math.max(p.baseY, p.baseY + ky * subjH)) + pad);
  if (rx1 < rx0 || ry1 < ry0) return out;
  const rw = rx1 - rx0 + 1;
  const rh = ry1 - ry0 + 1;

  const cast = new Float32Array(rw * rh);
  const castH = new Float32Array(rw * rh);
  const contact = new Float32Array(rw * rh);
  for (let y = y0; y <= y1; y++) {
    const hp = p.baseY - y;
    for (let x = x0; x <= x1; x++) {
      const a = p.rgba[(y * size + x) * 4 + 3]! / 255;
      if (a <= 0) continue;
      const tx = Math.round(x + kx * hp) - rx0;
      const ty = Math.round(p.baseY + ky * hp) - ry0;
      if (tx >= 0 && tx < rw && ty >= 0 && ty < rh) {
        const j = ty * rw + tx;
        if (a > cast[j]!) {
          cast[j] = a;
          castH[j] = hp;
        }
      }
      // Contact occlusion: the silhouette squashed almost flat onto its footprint.
      const cy = Math.round(p.baseY - hp * 0.04) - ry0;
      const cx = x - rx0;
      if (cy >= 0 && cy < rh && cx >= 0 && cx < rw) {
        const j = cy * rw + cx;
        const wgt = a * Math.exp(-hp / (subjH * 0.25));
        if (wgt > contact[j]!) contact[j] = wgt;
      }
    }
  }
  const near = gaussianBlur(cast, rw, rh, sNear);
  const far = gaussianBlur(cast, rw, rh, sFar);
  const hBlur = gaussianBlur(
    castH.map((h, i) => h * cast[i]!),
    rw,
    rh,
    sFar,
  );
  const ao = gaussianBlur(contact, rw, rh, sAo);
  const aoWide = gaussianBlur(contact, rw, rh, sAoWide);
  // Darkness of the key-light shadow: a hard, strong key casts a dark one; a huge soft source
  // or strong ambient only a faint one.
  const castStrength = (1 - soft * 0.55) * (spec.light.intensity / (spec.light.intensity + spec.ambient.intensity)) * 0.85;
  for (let y = 0; y < rh; y++) {
    for (let x = 0; x < rw; x++) {
      const i = y * rw + x;
      const hp = far[i]! > 1e-4 ? hBlur[i]! / far[i]! : 0;
      const t = Math.min(1, hp / (subjH * 0.7));
      const c = (near[i]! * (1 - t) + far[i]! * t) * Math.exp(-hp / (subjH * 1.2)) * castStrength;
      const o = Math.min(1, ao[i]! * 1.1 + aoWide[i]! * 0.45);
      out[(y + ry0) * size + x + rx0] = 1 - (1 - c) * (1 - o);
    }
  }
  return out;
}

export interface ComposeResult {
  rgb: Buffer;
  /** The shadow applied, for tests and meta. */
  shadow: Float32Array;
}

/**
 * How the scene's light changes the subject, per sRGB channel: a product photographed under a
 * neutral studio light and put in a sunset must turn warmer and a little darker, at night bluer
 * and much darker. The gain is the scene's light (key + fill, in its colour) relative to the
 * neutral reference light of the presets, applied in part (the subject was lit once already,
 * and a full re-light would need its 3D shape).
 */
export function subjectGrade(spec: SceneSpec): [number, number, number] {
  const lum = (c: readonly number[]) => 0.2126 * c[0]! + 0.7152 * c[1]! + 0.0722 * c[2]!;
  const keyCos = Math.max(0.35, Math.sin((Math.max(3, spec.light.elevation) * Math.PI) / 180) * 0.6 + 0.4);
  const light = [0, 1, 2].map((c) => spec.light.color[c]! * spec.light.intensity * keyCos + spec.ambient.color[c]! * spec.ambient.intensity);
  const ref = 1.1 * 0.85 * 0.97 + 0.42 * 0.95;
  const l = lum(light);
  const bright = Math.min(1.12, Math.max(0.5, ((l * spec.exposure) / ref) ** 0.6));
  // Chromatic part relative to the light's own luminance, at 60%, capped.
  return light.map((v) => Math.min(1.35, Math.max(0.55, bright * (1 + (v / l - 1) * 0.6)))) as [number, number, number];
}

/** sRGB 8-bit -> gained sRGB 8-bit through linear light, by table per channel. */
export function gradeTables(gain: [number, number, number]): Uint8Array[] {
  return gain.map((g) => {
    const t = new Uint8Array(256);
    for (let v = 0; v < 256; v++) {
      const c = v / 255;
      const l = (c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4) * g;
      const s = l <= 0.0031308 ? l * 12.92 : 1.055 * Math.min(1, l) ** (1 / 2.4) - 0.055;
      t[v] = Math.round(Math.min(1, Math.max(0, s)) * 255);
    }
    return t;
  });
}

/**
 * The subject mirrored in a glossy ground (water, marble, glass, a wet street): flipped about
 * its base, fading with distance from the contact, softened, and rippled on water.
 */
function addReflection(bg: Buffer, p: Placement, strength: number, ripple: boolean, lut: Uint8Array[]) {
  if (!p.bbox || strength <= 0) return;
  const { size } = p;
  const { x0, y0, x1, y1 } = p.bbox;
  const h = y1 - y0 + 1;
  const reach = Math.min(size - 1, p.baseY + Math.round(h * 0.8));
  const w = x1 - x0 + 1 + 16;
  const rh = reach - p.baseY + 1;
  if (rh <= 1) return;
  const ox = x0 - 8;
  const planes = [0, 1, 2, 3].map(() => new Float32Array(w * rh));
  for (let ry = 0; ry < rh; ry++) {
    const sy = p.baseY - ry;
    if (sy < y0) break;
    const dx = ripple ? Math.round(Math.sin(ry * 0.35) * (1 + ry * 0.04)) : 0;
    for (let rx = 0; rx < w; rx++) {
      const sx = ox + rx + dx;
      if (sx < 0 || sx >= size) continue;
      const s = (sy * size + sx) * 4;
      const a = p.rgba[s + 3]! / 255;
      if (a <= 0) continue;
      const j = ry * w + rx;
      planes[3]![j] = a;
      for (let c = 0; c < 3; c++) planes[c]![j] = lut[c]![p.rgba[s + c]!]! * a;
    }
  }
  const sigma = ripple ? 2.5 : 1.2;
  const bl = planes.map((pl) => gaussianBlur(pl, w, rh, sigma));
  for (let ry = 0; ry < rh; ry++) {
    const y = p.baseY + ry;
    const fade = strength * Math.exp(-ry / (h * 0.28));
    for (let rx = 0; rx < w; rx++) {
      const x = ox + rx;
      if (x < 0 || x >= size) continue;
      const j = ry * w + rx;
      const a = bl[3]![j]!;
      if (a < 1e-3) continue;
      const i = (y * size + x) * 3;
      for (let c = 0; c < 3; c++) {
        const col = bl[c]![j]! / a;
        bg[i + c] = Math.round(bg[i + c]! + (col - bg[i + c]!) * a * fade);
      }
    }
  }
}

/** Reflection, shadow onto the scene, then the subject (graded to the scene light) with light wrap. */
export async function compose(
  scene: Buffer,
  keyShare: Float32Array,
  p: Placement,
  layout: Layout,
  spec: SceneSpec,
  signal?: AbortSignal,
  /**
   * A user's photo: the subject's grade measured from it rather than derived from the spec, and
   * a shadow multiplier (a photo's texture hides a shadow a flat rendered ground shows).
   */
  photo?: { gain: [number, number, number]; shadow: number },
): Promise<ComposeResult> {
  const gain = photo?.gain;
  const { size } = p;
  const lut = gradeTables(gain ?? subjectGrade(spec));
  const bg = Buffer.from(scene);
  addReflection(
    bg,
    p,
    Math.max(spec.reflect, spec.podium ? 0 : (MATERIAL_REFLECT[spec.floor] ?? 0)),
    spec.far?.material === 'sea' || spec.far?.material === 'pool' || spec.floor === 'sea' || spec.floor === 'pool',
    lut,
  );
  const shadow = shadowMap(p, layout, spec);
  if (photo) for (let i = 0; i < shadow.length; i++) shadow[i] = Math.min(0.9, shadow[i]! * photo.shadow);
  throwIfAborted(signal);
  const amb = spec.ambient.color;
  const ambMax = Math.max(...amb);
  for (let i = 0; i < size * size; i++) {
    const s = shadow[i]!;
    if (s < 1e-3) continue;
    // What the shadow removes is the key light; what is left is tinted like the ambient fill.
    const remove = s * (0.35 + 0.65 * keyShare[i]!);
    for (let c = 0; c < 3; c++) {
      const tint = 1 - remove + remove * 0.12 * (amb[c]! / ambMax);
      bg[i * 3 + c] = Math.round(bg[i * 3 + c]! * tint);
    }
  }

  // Light wrap: within a few px inside the edge, blend in the blurred background.
  const wrapR = Math.max(2, size * 0.004);
  const alpha = new Float32Array(size * size);
  for (let i = 0; i < alpha.length; i++) alpha[i] = p.rgba[i * 4 + 3]! / 255;
  const aBlur = new Float32Array(size * size).fill(1);
  if (p.bbox) {
    const pad = Math.ceil(wrapR * 3) + 2;
    const wx0 = Math.max(0, p.bbox.x0 - pad),
      wy0 = Math.max(0, p.bbox.y0 - pad);
    const ww = Math.min(size - 1, p.bbox.x1 + pad) - wx0 + 1,
      wh = Math.min(size - 1, p.bbox.y1 + pad) - wy0 + 1;
    const win = new Float32Array(ww * wh);
    for (let y = 0; y < wh; y++) for (let x = 0; x < ww; x++) win[y * ww + x] = alpha[(y + wy0) * size + x + wx0]!;
    const b = gaussianBlur(win, ww, wh, wrapR);
    for (let y = 0; y < wh; y++) for (let x = 0; x < ww; x++) aBlur[(y + wy0) * size + x + wx0] = b[y * ww + x]!;
  }
  const bgBlur = await sharp(bg, { raw: { width: size, height: size, channels: 3 } })
    .blur(Math.max(3, size * 0.012))
    .raw()
    .toBuffer();
  throwIfAborted(signal);
  const out = Buffer.alloc(size * size * 3);
  for (let i = 0; i < size * size; i++) {
    const a = alpha[i]!;
    if (a <= 0) {
      out[i * 3] = bg[i * 3]!;
      out[i * 3 + 1] = bg[i * 3 + 1]!;
      out[i * 3 + 2] = bg[i * 3 + 2]!;
      continue;
    }
    const edge = Math.max(0, 1 - aBlur[i]!);
    const wrap = Math.min(1, edge * 2.2) * 0.45;
    for (let c = 0; c < 3; c++) {
      const s = lut[c]![p.rgba[i * 4 + c]!]!;
      const b = bgBlur[i * 3 + c]!;
      // Screen-blend half, mix half: bright surroundings glow over the rim, dark ones do not punch holes.
      const screen = 255 - ((255 - s) * (255 - b)) / 255;
      const wrapped = s + (0.5 * screen + 0.5 * b - s) * wrap;
      out[i * 3 + c] = Math.round(wrapped * a + bg[i * 3 + c]! * (1 - a));
    }
  }
  return { rgb: out, shadow };
}

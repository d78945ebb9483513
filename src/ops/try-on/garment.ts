import sharp from 'sharp';
import { throwIfAborted } from '../../errors.js';
import type { DecodedImage, RawImage } from '../../media/image.js';
import { cutoutSubject } from '../../vision/cutout/cutout.js';
import { analyseBody, type Point } from './body.js';
import { delightGarment } from './garment-light.js';
import { neckOpening } from './neckline.js';
import { bbox, clamp, components, fillHoles, keepLabel, median, morph, padBox, plane, runAt, threshold, type Plane } from './raster.js';
import { skinMask } from './skin.js';
import { squareStraps } from './straps.js';
import { innerBack, type WornGarment, wornGarment } from './worn-garment.js';

export type GarmentKind = 'top' | 'bottom' | 'full';

/** Garment landmarks in the garment crop's pixel coordinates. */
export interface GarmentLandmarks {
  cx: number;
  top: number;
  bottom: number;
  /** Top of the neckline at the centre (tops, full-length) or of the waistband (bottoms). */
  neck: Point;
  shoulderL: Point;
  shoulderR: Point;
  /** The row where the body of the garment starts (armpits, top of a bodice, waistband). */
  chestY: number;
  chestL: number;
  chestR: number;
  waistY: number;
  waistL: number;
  waistR: number;
  hemY: number;
  hemL: number;
  hemR: number;
  sleeveL: Sleeve | null;
  sleeveR: Sleeve | null;
}

/**
 * A sleeve: its outermost point (tip) and the cuff's inner end. A sleeve hanging down against
 * the garment's body (a coat laid flat) also has `inner`, the body's edge it hangs beside (its
 * pixels are those beyond it), and `bottom`, the cuff's lowest row.
 */
export interface Sleeve {
  tip: Point;
  cuff: Point;
  inner?: number;
  bottom?: number;
}

export interface Garment {
  /** RGBA crop around the garment, straight (not premultiplied) alpha. */
  rgba: RawImage;
  /** `rgba`'s pixels with the garment photo's own broad light divided out (garment-light.ts delightGarment): the opening is sought on them, and they are drawn lit by the scene. */
  delit: Uint8Array;
  /** 0/1 garment pixels of the crop. */
  mask: Plane;
  /** 0/1 sleeve pixels (the parts allowed to cover bare arms). */
  sleeves: Plane;
  /**
   * 0/1 body of a worn garment without its sleeves (worn-garment.ts): its sleeves hang along the
   * arms against it, so its own rows are no guide to the torso's width. Absent for a garment
   * laid flat.
   */
  torso?: Plane;
  /** 0/1 neckline opening (the inner back inside the collar, neckline.ts), or null when none was found. */
  opening: Plane | null;
  kind: GarmentKind;
  landmarks: GarmentLandmarks;
  /** Whether the photo showed a person or other objects, so the garment had to be extracted. */
  extracted: boolean;
  reasons: string[];
}

/** Garment photos are analysed and sampled at this long side at most. */
const WORK_SIDE = 1024;

export interface GarmentOptions {
  preprocess: boolean;
  signal?: AbortSignal;
}

export async function prepareGarment(img: DecodedImage, opts: GarmentOptions): Promise<Garment> {
  const work = await toWorkScale(img);
  const { width: w, height: h } = work;
  const n = w * h;
  const hasUsefulAlpha = work.channels === 4 && transparentShare(work) > 0.005;

  let rgba: Buffer;
  let alpha: Uint8Array;
  if (!hasUsefulAlpha && opts.preprocess) {
    // A photo without transparency: the subject cut-out is the background removal.
    const cut = await cutoutSubject(work, { signal: opts.signal });
    rgba = cut.rgba.data;
    alpha = cut.mask;
  } else if (hasUsefulAlpha) {
    // The background is already removed (a product cut-out); its alpha is the extraction.
    rgba = work.data;
    alpha = new Uint8Array(n);
    for (let i = 0; i < n; i++) alpha[i] = work.data[i * 4 + 3]!;
  } else {
    ({ rgba, alpha } = keyBackground(work));
  }
  throwIfAborted(opts.signal);

  const fg = threshold(plane(w, h, alpha), 128);
  const { labels, comps } = components(fg);
  if (!comps.length) throw new Error('no garment found');
  const largest = comps.reduce((a, b) => (b.area > a.area ? b : a));
  const fgArea = comps.reduce((s, c) => s + c.area, 0);

  let region: Plane = keepLabel(labels, largest.label, w, h);
  const reasons: string[] = [];
  let worn: WornGarment | null = null;
  if (opts.preprocess) {
    const others = comps.filter((c) => c !== largest && c.area >= 0.05 * largest.area);
    if (others.length) reasons.push(`${others.length} other object${others.length > 1 ? 's' : ''} beside the garment`);
    const rgb = toRgb(rgba, n);
    const person = personCues(rgb, w, h, fg, fgArea);
    reasons.push(...person);
    // Worn: found with the pose model (worn-garment.ts), which also tells a top from a dress, or
    // else grown across small colour steps. A photo (no alpha of its own) is shown to the pose
    // model whatever the colour cues say: on a greyscale photo the skin rule finds no skin.
    // A garment held up in front of the person, laid flat (a t-shirt with both its sleeves out, of
    // one colour), is what colour continuity finds from the torso's middle: it is taken as such.
    if (person.length || !hasUsefulAlpha) {
      worn = await wornGarment(work, rgb, alpha, opts.signal);
      const held = person.length ? isolateWornGarment(rgb, w, h, alpha, region) : null;
      if (worn && held && laidFlat(held, worn.region)) worn = null;
      if (worn && !person.length) reasons.push('a person wearing it');
      if (worn && worn.people > 1) reasons.push(`${worn.people} people; the garment of the most prominent one facing the camera`);
      if (worn) region = worn.region;
      else if (held) region = held;
    }
  }
  const extracted = reasons.length > 0;

  const box = bbox(region);
  if (!box) throw new Error('no garment found');
  const pad = 2;
  const { x0, y0, w: cw, h: ch } = padBox(box, pad, w, h);
  // Soft edges survive: alpha is kept within one pixel of the chosen region.
  const keep = morph(region, 1);
  const crop = Buffer.alloc(cw * ch * 4);
  const mask = new Uint8Array(cw * ch);
  for (let y = 0; y < ch; y++) {
    for (let x = 0; x < cw; x++) {
      const si = (y + y0) * w + (x + x0),
        di = y * cw + x;
      crop[di * 4] = rgba[si * 4]!;
      crop[di * 4 + 1] = rgba[si * 4 + 1]!;
      crop[di * 4 + 2] = rgba[si * 4 + 2]!;
      crop[di * 4 + 3] = keep.data[si] ? alpha[si]! : 0;
      mask[di] = region.data[si]!;
    }
  }
  let maskPlane = plane(cw, ch, mask);
  const cropPlane = (p: Plane) => {
    const out = new Uint8Array(cw * ch);
    for (let y = 0; y < ch; y++) for (let x = 0; x < cw; x++) out[y * cw + x] = p.data[(y + y0) * w + x + x0]!;
    return plane(cw, ch, out);
  };
  const kind = worn?.kind ?? classify(maskPlane);
  let landmarks = worn ? shiftLandmarks(worn.landmarks, -x0, -y0) : findLandmarks(maskPlane, kind);
  let data: Buffer = crop;
  // A dress's straps go on over the shoulders (straps.ts); a worn one's go on over the shoulders already.
  const squared = !worn && kind === 'full' && !landmarks.sleeveL && !landmarks.sleeveR ? squareStraps(crop, maskPlane, landmarks) : null;
  if (squared) ({ rgba: data, mask: maskPlane, landmarks } = squared);
  const sleeves = worn ? cropPlane(worn.sleeves) : sleeveMask(maskPlane, landmarks);
  const torso = worn ? cropPlane(worn.torso) : undefined;
  // A worn garment's neckline opening is where the wearer's neck was: it becomes the collar's
  // inner back (worn-garment.ts neckNotch).
  const wornOpening = worn ? innerBack(data, maskPlane, cropPlane(worn.opening)) : null;
  // Sought on the garment de-lit, as it is drawn: a studio gradient darkening the collar made
  // the t-shirt's ring as dark as its inner back, and the opening took the whole ring.
  const delit = delightGarment(data, cw, maskPlane.height);
  const opening = kind === 'bottom' ? null : worn ? wornOpening : neckOpening(delit, maskPlane, landmarks);
  return {
    rgba: { data, width: cw, height: maskPlane.height, channels: 4 },
    delit,
    mask: maskPlane,
    sleeves,
    torso,
    opening,
    kind,
    landmarks,
    extracted,
    reasons,
  };
}

/**
 * Whether the region colour continuity found (`held`) is a garment laid flat in front of the
 * person: a top with both sleeves by its shape, at least half the size of what the pose model
 * calls the worn garment (`worn`). A worn shirt's region ends at its stripes, print or folds, or
 * takes in the wearer's other clothes (one stripe of a jersey, half a suit, three people's suits).
 */
function laidFlat(held: Plane, worn: Plane): boolean {
  const box = bbox(held);
  if (!box) return false;
  const { width: w } = held;
  const cw = box.x1 - box.x0 + 1,
    ch = box.y1 - box.y0 + 1;
  const crop = plane(cw, ch);
  let area = 0;
  for (let y = 0; y < ch; y++) {
    for (let x = 0; x < cw; x++) {
      const v = held.data[(y + box.y0) * w + x + box.x0]!;
      crop.data[y * cw + x] = v;
      area += v;
    }
  }
  if (area < 0.5 * count(worn) || classify(crop) !== 'top') return false;
  const lm = findLandmarks(crop, 'top');
  return !!lm.sleeveL && !!lm.sleeveR;
}

/** Landmarks moved by (dx, dy). */
function shiftLandmarks(lm: GarmentLandmarks, dx: number, dy: number): GarmentLandmarks {
  const pt = (p: Point) => ({ x: p.x + dx, y: p.y + dy });
  const sleeve = (s: Sleeve | null) =>
    s
      ? {
          ...s,
          tip: pt(s.tip),
          cuff: pt(s.cuff),
          inner: s.inner === undefined ? undefined : s.inner + dx,
          bottom: s.bottom === undefined ? undefined : s.bottom + dy,
        }
      : null;
  return {
    cx: lm.cx + dx,
    top: lm.top + dy,
    bottom: lm.bottom + dy,
    neck: pt(lm.neck),
    shoulderL: pt(lm.shoulderL),
    shoulderR: pt(lm.shoulderR),
    chestY: lm.chestY + dy,
    chestL: lm.chestL + dx,
    chestR: lm.chestR + dx,
    waistY: lm.waistY + dy,
    waistL: lm.waistL + dx,
    waistR: lm.waistR + dx,
    hemY: lm.hemY + dy,
    hemL: lm.hemL + dx,
    hemR: lm.hemR + dx,
    sleeveL: sleeve(lm.sleeveL),
    sleeveR: sleeve(lm.sleeveR),
  };
}

async function toWorkScale(img: DecodedImage): Promise<RawImage> {
  const scale = Math.min(1, WORK_SIDE / Math.max(img.width, img.height));
  if (scale === 1) return img;
  const width = Math.max(1, Math.round(img.width * scale)),
    height = Math.max(1, Math.round(img.height * scale));
  const data = await sharp(img.data, { raw: { width: img.width, height: img.height, channels: img.channels } })
    .resize(width, height, { fit: 'fill' })
    .raw()
    .toBuffer();
  return { data, width, height, channels: img.channels };
}

function transparentShare(img: RawImage): number {
  let t = 0;
  const n = img.width * img.height;
  for (let i = 0; i < n; i++) if (img.data[i * 4 + 3]! < 250) t++;
  return t / n;
}

function toRgb(rgba: Buffer, n: number): Uint8Array {
  const rgb = new Uint8Array(n * 3);
  for (let i = 0; i < n; i++) {
    rgb[i * 3] = rgba[i * 4]!;
    rgb[i * 3 + 1] = rgba[i * 4 + 1]!;
    rgb[i * 3 + 2] = rgba[i * 4 + 2]!;
  }
  return rgb;
}

/**
 * Without preprocessing and without alpha the photo is taken as shot on a plain backdrop:
 * pixels that differ from the border's median colour, plus anything they enclose.
 */
function keyBackground(img: RawImage): { rgba: Buffer; alpha: Uint8Array } {
  const { width: w, height: h, channels: c } = img;
  const border: number[][] = [[], [], []];
  const sample = (x: number, y: number) => {
    for (let k = 0; k < 3; k++) border[k]!.push(img.data[(y * w + x) * c + k]!);
  };
  for (let x = 0; x < w; x++) {
    sample(x, 0);
    sample(x, h - 1);
  }
  for (let y = 0; y < h; y++) {
    sample(0, y);
    sample(w - 1, y);
  }
  const bg = border.map(median);
  const fg = new Uint8Array(w * h);
  for (let i = 0; i < w * h; i++) {
    let d = 0;
    for (let k = 0; k < 3; k++) d = Math.max(d, Math.abs(img.data[i * c + k]! - bg[k]!));
    fg[i] = d > 30 ? 1 : 0;
  }
  const filled = fillHoles(plane(w, h, fg));
  const rgba = Buffer.alloc(w * h * 4);
  const alpha = new Uint8Array(w * h);
  for (let i = 0; i < w * h; i++) {
    for (let k = 0; k < 3; k++) rgba[i * 4 + k] = img.data[i * c + k]!;
    alpha[i] = filled.data[i] ? 255 : 0;
    rgba[i * 4 + 3] = alpha[i]!;
  }
  return { rgba, alpha };
}

/**
 * Signs that the photo shows a person: a face-like skin blob (compact, with non-skin holes for
 * eyes and mouth) or a sizeable share of skin in the foreground.
 */
function personCues(rgb: Uint8Array, w: number, h: number, fg: Plane, fgArea: number): string[] {
  const skin = skinMask(rgb, w, h, 3, fg);
  const { labels, comps } = components(skin);
  let skinArea = 0;
  for (const c of comps) skinArea += c.area;
  const cues: string[] = [];
  for (const c of comps) {
    if (c.area < 0.003 * fgArea) continue;
    const bw = c.x1 - c.x0 + 1,
      bh = c.y1 - c.y0 + 1;
    const aspect = bh / bw,
      fill = c.area / (bw * bh);
    if (aspect < 0.8 || aspect > 2.2 || fill < 0.45) continue;
    const blob = keepLabel(labels, c.label, w, h);
    const holes = count(fillHoles(blob)) - c.area;
    if (holes >= 0.01 * c.area) {
      cues.push('a face');
      break;
    }
  }
  // A foreground that is mostly skin-toned is a beige/peach garment (the coat fixture: 100%),
  // not a person wearing one, which shows the garment too: no extraction, no surcharge.
  if (skinArea >= 0.06 * fgArea && skinArea <= 0.6 * fgArea) cues.push(`skin tones over ${Math.round((100 * skinArea) / fgArea)}% of the foreground`);
  return cues;
}

function count(p: Plane): number {
  let s = 0;
  for (let i = 0; i < p.data.length; i++) s += p.data[i]!;
  return s;
}

/**
 * A garment worn by a person: locate the torso with the body analysis, then grow the region
 * from the torso centre across small colour steps only, so the garment stops at the sharp
 * colour edges against skin, hair, other clothes and objects.
 */
function isolateWornGarment(rgb: Uint8Array, w: number, h: number, alpha: Uint8Array, fallback: Plane): Plane {
  let body: ReturnType<typeof analyseBody>;
  try {
    body = analyseBody(rgb, w, h, plane(w, h, alpha));
  } catch {
    return fallback;
  }
  const allowed = new Uint8Array(w * h);
  for (let i = 0; i < w * h; i++) allowed[i] = body.silhouette.data[i] && !body.occluder.data[i] && !body.skin.data[i] ? 1 : 0;
  const sy = Math.round(clamp((body.armpitY + body.waistY) / 2, 0, h - 1));
  let seed = Math.round(sy * w + body.cx);
  if (!allowed[seed]) {
    const run = runAt(plane(w, h, allowed), sy, body.cx);
    if (!run) return fallback;
    seed = sy * w + Math.round((run[0] + run[1]) / 2);
  }
  // Smooth shading inside a garment changes a few levels per pixel; an edge against
  // something else jumps tens of levels within one or two (antialiased) pixels.
  const step = 16;
  const grown = new Uint8Array(w * h);
  const stack = new Int32Array(w * h);
  let sp = 0;
  grown[seed] = 1;
  stack[sp++] = seed;
  while (sp) {
    const i = stack[--sp]!;
    const x = i % w;
    const nbs = [x > 0 ? i - 1 : -1, x < w - 1 ? i + 1 : -1, i >= w ? i - w : -1, i < w * (h - 1) ? i + w : -1];
    for (const j of nbs) {
      if (j < 0 || grown[j] || !allowed[j]) continue;
      const d = Math.max(Math.abs(rgb[i * 3]! - rgb[j * 3]!), Math.abs(rgb[i * 3 + 1]! - rgb[j * 3 + 1]!), Math.abs(rgb[i * 3 + 2]! - rgb[j * 3 + 2]!));
      if (d > step) continue;
      grown[j] = 1;
      stack[sp++] = j;
    }
  }
  const r = Math.max(1, Math.round(Math.max(w, h) / 256));
  const closed = fillHoles(morph(morph(plane(w, h, grown), r), -r));
  const { labels, comps } = components(closed);
  if (!comps.length) return fallback;
  const big = comps.reduce((a, b) => (b.area > a.area ? b : a));
  return keepLabel(labels, big.label, w, h);
}

interface Profile {
  /** Extent (leftmost, rightmost opaque x) per row, -1 when empty. */
  left: Int32Array;
  right: Int32Array;
  top: number;
  bottom: number;
  height: number;
}

function profile(mask: Plane): Profile {
  const { width: w, height: h } = mask;
  const left = new Int32Array(h).fill(-1),
    right = new Int32Array(h).fill(-1);
  let top = h,
    bottom = -1;
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      if (mask.data[y * w + x]) {
        if (left[y] < 0) left[y] = x;
        right[y] = x;
      }
    }
    if (left[y]! >= 0) {
      if (top === h) top = y;
      bottom = y;
    }
  }
  return { left, right, top, bottom, height: bottom - top + 1 };
}

function rowAt(p: Profile, t: number): number {
  return Math.round(p.top + t * (p.height - 1));
}

function extentWidth(p: Profile, y: number): number {
  return p.left[y]! < 0 ? 0 : p.right[y]! - p.left[y]! + 1;
}

function meanWidth(p: Profile, t0: number, t1: number): number {
  let s = 0,
    n = 0;
  for (let y = rowAt(p, t0); y <= rowAt(p, t1); y++) {
    s += extentWidth(p, y);
    n++;
  }
  return n ? s / n : 0;
}

function runsInRow(mask: Plane, y: number, minLen: number): number {
  let runs = 0,
    len = 0;
  for (let x = 0; x < mask.width; x++) {
    if (mask.data[y * mask.width + x]) len++;
    else {
      if (len >= minLen) runs++;
      len = 0;
    }
  }
  return runs + (len >= minLen ? 1 : 0);
}

/**
 * Top, bottom or full-length from the silhouette alone:
 * two legs at the bottom => bottom (trousers, shorts); shoulders/sleeves as wide as the garment
 * near the top => top (or a coat when very long); a narrow top flaring below a waist => full-length
 * (dress) when long, else a skirt (bottom); otherwise by aspect ratio.
 */
export function classify(mask: Plane): GarmentKind {
  const p = profile(mask);
  let maxW = 0;
  for (let y = p.top; y <= p.bottom; y++) maxW = Math.max(maxW, extentWidth(p, y));
  const aspect = p.height / Math.max(1, maxW);
  const wTop = meanWidth(p, 0.05, 0.25);
  const minLeg = Math.max(2, Math.round(0.05 * maxW));
  const legRows: number[] = [];
  for (let t = 0.75; t <= 0.95; t += 0.02) legRows.push(runsInRow(mask, rowAt(p, t), minLeg));
  if (median(legRows) >= 2 && wTop >= 0.6 * maxW) return 'bottom';
  if (wTop >= 0.8 * maxW) return aspect < 1.6 ? 'top' : 'full';
  let waist = Infinity;
  for (let t = 0.2; t <= 0.5; t += 0.02) waist = Math.min(waist, extentWidth(p, rowAt(p, t)));
  const wBot = meanWidth(p, 0.8, 0.95);
  if (wBot >= 1.35 * waist) return aspect >= 1.05 ? 'full' : 'bottom';
  return aspect < 1.5 ? 'top' : 'full';
}

function runThrough(mask: Plane, y: number, x: number): [number, number] {
  return runAt(mask, y, x) ?? [x, x];
}

function firstOpaque(mask: Plane, x: number, from: number): number {
  const xi = Math.round(clamp(x, 0, mask.width - 1));
  for (let y = from; y < mask.height; y++) if (mask.data[y * mask.width + xi]) return y;
  return from;
}

function findLandmarks(mask: Plane, kind: GarmentKind): GarmentLandmarks {
  const p = profile(mask);
  const H = p.height;
  // The body's centre line: run centres of the lower-middle rows (sleeves and straps excluded).
  const centres: number[] = [],
    bodyWs: number[] = [];
  const bbCentre = (Math.min(...Array.from(p.left).filter((v) => v >= 0)) + Math.max(...p.right)) / 2;
  for (let t = 0.55; t <= 0.85; t += 0.02) {
    const y = rowAt(p, t);
    const [l, r] = runThrough(mask, y, bbCentre);
    centres.push((l + r) / 2);
    bodyWs.push(r - l + 1);
  }
  const cx = median(centres);
  const bodyW = median(bodyWs);

  let chestY: number;
  if (kind === 'top') {
    // Armpits: below the widest (sleeve) row, where the extent narrows to the body's width.
    let widest = p.top,
      wmax = 0;
    for (let y = p.top; y <= rowAt(p, 0.6); y++)
      if (extentWidth(p, y) > wmax) {
        wmax = extentWidth(p, y);
        widest = y;
      }
    chestY = rowAt(p, 0.25);
    if (wmax > 1.15 * bodyW) {
      for (let y = widest; y <= rowAt(p, 0.7); y++) {
        if (extentWidth(p, y) <= 1.12 * bodyW) {
          chestY = y;
          break;
        }
      }
    }
  } else if (kind === 'full') {
    // Top of the bodice: the first row where a run through the centre is a real body width.
    chestY = rowAt(p, 0.2);
    for (let y = p.top; y <= rowAt(p, 0.5); y++) {
      const run = runAt(mask, y, cx);
      if (run && run[0] <= cx && run[1] >= cx && run[1] - run[0] + 1 >= 0.3 * bodyW) {
        chestY = Math.min(p.bottom, y + Math.round(0.04 * H));
        break;
      }
    }
  } else {
    chestY = rowAt(p, 0.04);
  }
  const [chestL, chestR] = runThrough(mask, chestY, cx);

  let neck: Point;
  let shoulderL: Point, shoulderR: Point;
  if (kind === 'top') {
    let ny = mask.height;
    for (let x = Math.round(cx - 0.08 * bodyW); x <= Math.round(cx + 0.08 * bodyW); x++) ny = Math.min(ny, firstOpaque(mask, x, p.top));
    neck = { x: cx, y: ny };
    const sxL = cx - 0.49 * bodyW,
      sxR = cx + 0.49 * bodyW;
    shoulderL = { x: sxL, y: firstOpaque(mask, sxL, p.top) };
    shoulderR = { x: sxR, y: firstOpaque(mask, sxR, p.top) };
  } else if (kind === 'full') {
    neck = { x: cx, y: firstOpaque(mask, cx, p.top) };
    // Straps or shoulders: the highest garment pixels left and right of the centre.
    const highest = (from: number, to: number): Point => {
      let best: Point = { x: (from + to) / 2, y: mask.height };
      for (let x = Math.max(0, from); x <= Math.min(mask.width - 1, to); x++) {
        const y = firstOpaque(mask, x, p.top);
        if (mask.data[y * mask.width + x] && y < best.y) best = { x, y };
      }
      return best;
    };
    shoulderL = highest(Math.round(chestL), Math.round(cx - 0.1 * bodyW));
    shoulderR = highest(Math.round(cx + 0.1 * bodyW), Math.round(chestR));
  } else {
    neck = { x: cx, y: p.top };
    shoulderL = { x: chestL, y: p.top };
    shoulderR = { x: chestR, y: p.top };
  }

  let waistY = rowAt(p, 0.5),
    waistBest = Infinity;
  if (kind === 'full') {
    for (let y = chestY + 1; y <= rowAt(p, 0.6); y++) {
      const [l, r] = runThrough(mask, y, cx);
      if (r - l < waistBest) {
        waistBest = r - l;
        waistY = y;
      }
    }
  }
  const [waistL, waistR] = runThrough(mask, waistY, cx);
  const hemY = Math.max(chestY + 1, rowAt(p, 0.97));
  const hemL = p.left[hemY]!,
    hemR = p.right[hemY]!;

  const sleeve = (side: -1 | 1) => {
    if (kind === 'bottom') return null;
    const edge = side < 0 ? chestL : chestR;
    let tip: Point | null = null,
      cuff: Point | null = null,
      area = 0;
    const yEnd = Math.min(p.bottom, chestY + Math.round(0.1 * H));
    for (let y = p.top; y <= yEnd; y++) {
      for (let x = 0; x < mask.width; x++) {
        if (!mask.data[y * mask.width + x]) continue;
        const out = side < 0 ? edge - x : x - edge;
        if (out < 0.03 * bodyW) continue;
        area++;
        if (!tip || out > (side < 0 ? edge - tip.x : tip.x - edge)) tip = { x, y };
      }
    }
    if (!tip || area < 0.01 * count(mask)) return null;
    const mid = (tip.x + edge) / 2;
    for (let y = yEnd; y >= p.top && !cuff; y--) {
      for (let x = Math.round(Math.min(tip.x, mid)); x <= Math.round(Math.max(tip.x, mid)); x++) {
        if (mask.data[y * mask.width + x]) {
          cuff = { x, y };
          break;
        }
      }
    }
    return cuff ? { tip, cuff } : null;
  };

  // Sleeves hanging against the body (a coat laid flat): low rows where the garment splits into
  // three runs, a sleeve either side of the body. Only sought when no sleeve stands out above
  // the armpits.
  const hanging = (side: -1 | 1): Sleeve | null => {
    if (kind !== 'top') return null;
    let inner = side < 0 ? Infinity : -Infinity,
      rows = 0,
      bottom = -1;
    let tip: Point | null = null,
      cuff: Point | null = null;
    for (let y = chestY + 1; y <= p.bottom; y++) {
      const body = runAt(mask, y, cx);
      if (!body) continue;
      const [bl, br] = body;
      const edge = side < 0 ? bl : br;
      // The sleeve's run: the next opaque run outside the body on this side.
      let x = edge + 2 * side;
      while (x >= 0 && x < mask.width && !mask.data[y * mask.width + x]) x += side;
      if (x < 0 || x >= mask.width) continue;
      const run = runAt(mask, y, x);
      if (!run) continue;
      rows++;
      inner = side < 0 ? Math.min(inner, bl) : Math.max(inner, br);
      bottom = y;
      const out = side < 0 ? run[0] : run[1];
      const inn = side < 0 ? run[1] : run[0];
      if (!tip || (side < 0 ? out <= tip.x : out >= tip.x)) tip = { x: out, y };
      cuff = { x: inn, y };
    }
    if (rows < 0.04 * H || !tip || !cuff || !Number.isFinite(inner)) return null;
    return { tip, cuff, inner: inner - side, bottom };
  };
  const sleeveL = sleeve(-1) ?? hanging(-1);
  const sleeveR = sleeve(1) ?? hanging(1);

  return {
    cx,
    top: p.top,
    bottom: p.bottom,
    neck,
    shoulderL,
    shoulderR,
    chestY,
    chestL,
    chestR,
    waistY,
    waistL,
    waistR,
    hemY,
    hemL,
    hemR,
    sleeveL,
    sleeveR,
  };
}

/** Sleeves: garment pixels outside the body's sides above the armpit row. */
function sleeveMask(mask: Plane, lm: GarmentLandmarks): Plane {
  const out = new Uint8Array(mask.data.length);
  if (!lm.sleeveL && !lm.sleeveR) return plane(mask.width, mask.height, out);
  for (let y = 0; y < mask.height; y++) {
    for (let x = 0; x < mask.width; x++) {
      const i = y * mask.width + x;
      if (!mask.data[i]) continue;
      if ((x < lm.chestL || x > lm.chestR) && y <= lm.chestY + 2) out[i] = 1;
      // A hanging sleeve: everything beyond the body's edge down to its cuff.
      else if (lm.sleeveL?.inner !== undefined && x < lm.sleeveL.inner && y <= lm.sleeveL.bottom!) out[i] = 1;
      else if (lm.sleeveR?.inner !== undefined && x > lm.sleeveR.inner && y <= lm.sleeveR.bottom!) out[i] = 1;
    }
  }
  return plane(mask.width, mask.height, out);
}

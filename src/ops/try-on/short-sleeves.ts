import type { Person } from '../../engine/people.js';
import type { BodyGeometry } from './body.js';
import { BARE, bareShare, oldSleeveEnd } from './old-sleeve.js';
import { upperArms } from './pose.js';
import { median } from './raster.js';
import { armPolyline, type Seg } from './sleeves.js';

/** Past the end the arm must stay bare over this length (shoulder widths), in this share of its cross-sections. */
const BARE_SPAN = 0.3;
const BARE_RUN = 0.8;

/** Half the arm's width in shoulder widths: its bare skin is sampled this far either side of the bone line. */
export const ARM_HALF = 0.16;
/** The skin sampled for the arm's colour: this far along the bare arm past the old sleeve's end, in shoulder widths. */
const SAMPLE = 0.3;
/** Fewer skin pixels than this in the sample (per working-scale pixel): the arm is not taken. */
const MIN_SAMPLE = 12;

/** A short sleeve of the photo's own clothing. */
export interface ShortSleeve {
  /** The arm's bone line, shoulder -> elbow -> wrist, full-size pixels. */
  segs: Seg[];
  /** Arc length along `segs` where the sleeve ends. */
  end: number;
  /** The bare arm's skin past the end: its median RGB and the full-size pixels sampled. */
  skin: { rgb: [number, number, number]; at: number[] };
}

/**
 * The photo's short sleeves: per arm BlazePose saw (shoulder and elbow seen, the elbow in the
 * frame; the wrist when seen: pose.ts upperArms, at visibility 0.5), where the sleeve ends along the whole arm from the shoulder joint
 * (old-sleeve.ts), when the arm stays bare past it: at least BARE_RUN of its cross-sections over
 * the next BARE_SPAN shoulder widths (or to the arm's end, at least half that) are bare. A patch
 * of skin-toned cloth on a long sleeve (apollo11_crew.jpg's suit: a beige patch by the wrist) is
 * not a bare forearm. An arm bare from the shoulder, or in a long sleeve, has none, nor one whose
 * bare skin past the end (SAMPLE shoulder widths, ARM_HALF either side, inside the outline
 * `inPerson`) holds fewer than MIN_SAMPLE skin pixels per working-scale pixel.
 */
export function shortSleeves(
  rgb: Uint8Array,
  channels: number,
  body: BodyGeometry,
  subject: Person,
  k: number,
  inPerson: Float32Array,
  width: number,
  height: number,
): ShortSleeve[] {
  const out: ShortSleeve[] = [];
  for (const { shoulder, elbow, wrist } of upperArms(subject, 1)) {
    if (elbow.x < 0 || elbow.y < 0 || elbow.x >= width || elbow.y >= height) continue;
    const { segs, total: acc } = armPolyline(shoulder, elbow, wrist ? { ...wrist, visibility: 1 } : { x: -1, y: -1, visibility: 0 }, width, height);
    if (!segs.length) continue;
    const end = oldSleeveEnd(body, k, segs, 0, acc / body.shoulderW / k);
    if (end === null || !bareBeyond(body, k, segs, end, acc)) continue;
    const skin = armSkin(rgb, channels, body, segs, end, k, inPerson, width, height);
    if (skin) out.push({ segs, end, skin });
  }
  return out;
}

function bareBeyond(body: BodyGeometry, k: number, segs: readonly Seg[], end: number, total: number): boolean {
  const span = Math.min(total - end, BARE_SPAN * body.shoulderW * k);
  if (span < 0.5 * BARE_SPAN * body.shoulderW * k) return false;
  let n = 0,
    bare = 0;
  for (let s = end; s <= end + span; s += k) {
    const v = bareShare(body, k, segs, s);
    if (v === null) continue;
    n++;
    if (v >= BARE) bare++;
  }
  return n > 0 && bare >= BARE_RUN * n;
}

/** The skin rule's pixels of the bare arm past the end: their median RGB and where they are; null when too few. */
function armSkin(
  rgb: Uint8Array,
  channels: number,
  body: BodyGeometry,
  segs: readonly Seg[],
  end: number,
  k: number,
  inPerson: Float32Array,
  width: number,
  height: number,
): ShortSleeve['skin'] | null {
  const sw = body.shoulderW * k;
  const half = ARM_HALF * sw;
  const box = armBox(segs, half, width, height);
  const rs: number[] = [],
    gs: number[] = [],
    bs: number[] = [],
    at: number[] = [];
  for (let y = box.y0; y <= box.y1; y++) {
    for (let x = box.x0; x <= box.x1; x++) {
      const { s, d } = along(segs, x + 0.5, y + 0.5);
      const i = y * width + x;
      if (d > half || s <= end || s > end + SAMPLE * sw || inPerson[i]! < 1) continue;
      const wx = Math.min(body.width - 1, Math.floor(x / k)),
        wy = Math.min(body.height - 1, Math.floor(y / k));
      if (!body.skin.data[wy * body.width + wx]) continue;
      rs.push(rgb[i * channels]!);
      gs.push(rgb[i * channels + 1]!);
      bs.push(rgb[i * channels + 2]!);
      at.push(i);
    }
  }
  if (rs.length < MIN_SAMPLE * k * k) return null;
  return { rgb: [median(rs), median(gs), median(bs)], at };
}

/** Arc length along `segs` of the point's projection (clamped to the polyline's ends) and its distance from it. */
export function along(segs: readonly Seg[], x: number, y: number): { s: number; d: number } {
  let best = { s: 0, d: Infinity };
  for (const g of segs) {
    const dx = (g.b.x - g.a.x) / g.len,
      dy = (g.b.y - g.a.y) / g.len;
    const t = Math.min(g.len, Math.max(0, (x - g.a.x) * dx + (y - g.a.y) * dy));
    const d = Math.hypot(x - g.a.x - dx * t, y - g.a.y - dy * t);
    if (d < best.d) best = { s: g.s0 + t, d };
  }
  return best;
}

/** The bounding box of the polyline grown by `r`, clipped to the image. */
export function armBox(segs: readonly Seg[], r: number, width: number, height: number) {
  let x0 = Infinity,
    y0 = Infinity,
    x1 = -Infinity,
    y1 = -Infinity;
  for (const g of segs) {
    x0 = Math.min(x0, g.a.x, g.b.x);
    y0 = Math.min(y0, g.a.y, g.b.y);
    x1 = Math.max(x1, g.a.x, g.b.x);
    y1 = Math.max(y1, g.a.y, g.b.y);
  }
  return {
    x0: Math.max(0, Math.floor(x0 - r)),
    y0: Math.max(0, Math.floor(y0 - r)),
    x1: Math.min(width - 1, Math.ceil(x1 + r)),
    y1: Math.min(height - 1, Math.ceil(y1 + r)),
  };
}

import { hash2 } from '../../media/random.js';
import { clamp01, fbm, lodWeight, smoothstep, valueNoise } from './noise.js';

/**
 * Procedural materials in world units (centimetres). Each writes an sRGB albedo (0..1) and a
 * gloss factor into `out`; `u` runs across the surface, `v` along it (depth for a table, height
 * for a wall) and `fp` is the size of one output pixel in cm, used to fade detail that would
 * alias. Colours are measured-by-eye palettes of the real materials, varied by the seed.
 */
export type Material = (u: number, v: number, fp: number, seed: number, out: Float32Array) => void;

export const MATERIAL_IDS = [
  'marble',
  'wood',
  'darkwood',
  'concrete',
  'metal',
  'linen',
  'brick',
  'quartz',
  'tile',
  'plaster',
  'paper',
  'sand',
  'dune',
  'grass',
  'forestfloor',
  'snow',
  'rock',
  'sea',
  'pool',
  'travertine',
  'asphalt',
  'silk',
  'drape',
  'shelves',
  'glass',
] as const;
export type MaterialId = (typeof MATERIAL_IDS)[number];

function set(out: Float32Array, r: number, g: number, b: number, gloss: number) {
  out[0] = clamp01(r);
  out[1] = clamp01(g);
  out[2] = clamp01(b);
  out[3] = gloss;
}

/** A thin line of half-width `w` around integer multiples of `period`, faded when sub-pixel. */
function groove(coord: number, period: number, w: number, fp: number): number {
  const d = Math.abs(coord / period - Math.round(coord / period)) * period;
  const soft = Math.max(fp * 0.75, w * 0.3);
  return (1 - smoothstep(w - soft, w + soft, d)) * Math.min(1, (w * 2) / Math.max(fp, 1e-6) + 0.25);
}

const marble: Material = (u, v, fp, seed, out) => {
  // Veins follow a turbulent band pattern; a sharp core inside a soft halo reads as stone,
  // a core alone reads as cracks.
  const warp = fbm(u * 0.01, v * 0.01, seed, 4, fp * 0.01, 0.45);
  const t = u * 0.022 + v * 0.014 + warp * 3.2;
  const s1 = 1 - Math.abs(Math.sin(t * Math.PI));
  const core = 14 / (1 + fp * 5);
  const vein1 = 0.55 * s1 ** (core * 3) + 0.45 * s1 ** 5;
  const warp2 = fbm(u * 0.025 + 17, v * 0.025, seed + 7, 4, fp * 0.025, 0.45);
  const s2 = 1 - Math.abs(Math.sin((u * 0.045 - v * 0.03 + warp2 * 2.6) * Math.PI));
  const vein2 = 0.6 * s2 ** (core * 5) + 0.4 * s2 ** 9;
  const cloud = fbm(u * 0.04, v * 0.04, seed + 3, 4, fp * 0.04) - 0.5;
  const k = 1 - 0.38 * vein1 - 0.16 * vein2 + cloud * 0.06;
  set(out, 0.93 * k + 0.012 * vein1, 0.925 * k + 0.006 * vein1, 0.915 * k + 0.02 * vein1, 0.55);
};

function woodAt(u: number, v: number, fp: number, seed: number, out: Float32Array, light: [number, number, number], dark: [number, number, number]) {
  const plankW = 14.5;
  const k = Math.floor(u / plankW);
  const r = hash2(k, 11, seed);
  const plankLen = 90 + r * 80;
  const vo = v + hash2(k, 12, seed) * plankLen;
  const j = Math.floor(vo / plankLen);
  const boardSeed = seed + k * 31 + j * 7;
  const du = u - k * plankW;
  // Rings: growth lines along the board, pushed around by low-frequency warp (figure).
  const warp = fbm(du * 0.08, vo * 0.006, boardSeed, 4, fp * 0.08) * 26;
  const ringCoord = (du + warp + hash2(k, j, seed) * 40) * 0.55;
  const ringFreqPx = 0.55 * fp;
  const ring = 0.5 + 0.5 * Math.sin(ringCoord * Math.PI * 2) * lodWeight(ringFreqPx);
  const late = ring ** 3;
  const fibre = (fbm(du * 1.6, vo * 0.05, boardSeed + 5, 4, fp * 1.6) - 0.5) * 0.22;
  const tone = 0.82 + 0.3 * hash2(k, j + 99, seed);
  let t = clamp01(0.35 + 0.45 * late + fibre);
  const seam = Math.max(groove(u, plankW, 0.12, fp), groove(vo, plankLen, 0.1, fp) * (Math.abs(du - plankW / 2) < plankW / 2 ? 1 : 0));
  const m = tone * (1 - 0.55 * seam);
  t = clamp01(t);
  set(out, (light[0] + (dark[0] - light[0]) * t) * m, (light[1] + (dark[1] - light[1]) * t) * m, (light[2] + (dark[2] - light[2]) * t) * m, 0.18);
}

const wood: Material = (u, v, fp, seed, out) => woodAt(u, v, fp, seed, out, [0.78, 0.58, 0.38], [0.52, 0.33, 0.19]);
const darkwood: Material = (u, v, fp, seed, out) => woodAt(u, v, fp, seed, out, [0.5, 0.33, 0.21], [0.27, 0.16, 0.09]);

const concrete: Material = (u, v, fp, seed, out) => {
  const mottle = fbm(u * 0.02, v * 0.02, seed, 5, fp * 0.02) - 0.5;
  const grit = (fbm(u * 0.9, v * 0.9, seed + 9, 3, fp * 0.9) - 0.5) * lodWeight(fp * 0.9);
  const cell = 0.35;
  const pit = hash2(Math.floor(u / cell), Math.floor(v / cell), seed + 21) > 0.985 ? lodWeight(fp / cell) : 0;
  const stain = smoothstep(0.58, 0.75, fbm(u * 0.008 + 40, v * 0.008, seed + 4, 3, fp * 0.008));
  const k = 0.98 + mottle * 0.22 + grit * 0.16 - pit * 0.25 - stain * 0.08;
  set(out, 0.6 * k, 0.595 * k, 0.58 * k, 0.08);
};

const metal: Material = (u, v, fp, seed, out) => {
  const panelW = 61;
  const panelH = 92;
  const pk = Math.floor(u / panelW) * 13 + Math.floor(v / panelH);
  const panelTone = (hash2(pk, 3, seed) - 0.5) * 0.1;
  // Brushing: noise stretched hard along u.
  const brush = (fbm(u * 0.04, v * 7, seed + 2, 3, Math.max(fp * 7, fp * 0.04)) - 0.5) * 0.3;
  const patina = fbm(u * 0.03, v * 0.03, seed + 5, 4, fp * 0.03) - 0.5;
  const seam = Math.max(groove(u, panelW, 0.25, fp), groove(v, panelH, 0.25, fp));
  const k = 1 + panelTone + brush + patina * 0.18 - seam * 0.6;
  set(out, 0.4 * k, 0.42 * k, 0.45 * k, 0.45);
};

const linen: Material = (u, v, fp, seed, out) => {
  const period = 0.26;
  const ti = Math.floor(u / period);
  const tj = Math.floor(v / period);
  // Slubs: some threads are thicker, which is what makes linen read as linen.
  const slubU = hash2(ti, Math.floor(v / 3), seed) > 0.88 ? 0.08 : 0;
  const slubV = hash2(tj, Math.floor(u / 3), seed + 1) > 0.88 ? 0.08 : 0;
  const w = lodWeight(fp / period);
  const warp = Math.sin((u / period) * Math.PI * 2) * (0.5 + slubU * 4);
  const weft = Math.sin((v / period) * Math.PI * 2) * (0.5 + slubV * 4);
  const weave = ((tj + ti) & 1 ? warp : weft) * 0.06 * w;
  const fold = (fbm(u * 0.03, v * 0.05, seed + 8, 4, fp * 0.05) - 0.5) * 0.22;
  const fleck = (valueNoise(u * 1.7, v * 0.3, seed + 3) - 0.5) * 0.06 * lodWeight(fp * 1.7);
  const k = 1 + weave + fold + fleck;
  set(out, 0.8 * k, 0.75 * k, 0.67 * k, 0.02);
};

const brick: Material = (u, v, fp, seed, out) => {
  const bw = 22.5;
  const bh = 7.5;
  const mortar = 1.0;
  const row = Math.floor(v / bh);
  const uo = u + (row & 1 ? bw / 2 : 0);
  const col = Math.floor(uo / bw);
  const lu = uo - col * bw;
  const lv = v - row * bh;
  const rough = (fbm(u * 0.6, v * 0.6, seed + 4, 3, fp * 0.6) - 0.5) * 0.8;
  const edge = Math.min(lu, bw - lu, lv, bh - lv) + rough;
  const inBrick = smoothstep(mortar / 2 - Math.max(fp, 0.15), mortar / 2 + Math.max(fp, 0.15), edge);
  const h1 = hash2(col, row, seed);
  const h2 = hash2(col, row, seed + 1);
  const grit = (fbm(u * 0.5, v * 0.5, seed + 6, 4, fp * 0.5) - 0.5) * 0.35;
  const soot = fbm(u * 0.015, v * 0.015, seed + 9, 3, fp * 0.015) - 0.5;
  const kb = (0.8 + h1 * 0.4 + grit) * (1 - soot * 0.3);
  const br = 0.58 * kb + h2 * 0.06;
  const bg = 0.29 * kb + h2 * 0.03;
  const bb = 0.21 * kb;
  const km = 0.95 + grit * 0.3;
  set(out, 0.68 * km + (br - 0.68 * km) * inBrick, 0.66 * km + (bg - 0.66 * km) * inBrick, 0.61 * km + (bb - 0.61 * km) * inBrick, 0.03);
};

const quartz: Material = (u, v, fp, seed, out) => {
  const cloud = fbm(u * 0.04, v * 0.04, seed, 4, fp * 0.04) - 0.5;
  let speck = 0;
  for (const [cell, thr, dark] of [
    [0.5, 0.93, 0.35],
    [0.22, 0.96, 0.55],
  ] as const) {
    const h = hash2(Math.floor(u / cell), Math.floor(v / cell), seed + cell * 100);
    if (h > thr) speck += dark * lodWeight(fp / cell) * ((h - thr) / (1 - thr) > 0.5 ? 1 : 0.5);
  }
  const k = 1 + cloud * 0.06 - speck;
  set(out, 0.9 * k, 0.895 * k, 0.88 * k, 0.6);
};

const tile: Material = (u, v, fp, seed, out) => {
  const tw = 15;
  const th = 7.5;
  const row = Math.floor(v / th);
  const uo = u + (row & 1 ? tw / 2 : 0);
  const col = Math.floor(uo / tw);
  const lu = uo - col * tw;
  const lv = v - row * th;
  const d = Math.min(lu, tw - lu, lv, th - lv);
  const grout = 1 - smoothstep(0.15 - Math.max(fp * 0.7, 0.05), 0.15 + Math.max(fp * 0.7, 0.05), d);
  // The glaze pools at the rounded edge, darkening it slightly.
  const bevel = (1 - smoothstep(0.15, 0.9, d)) * 0.12 * (1 - grout);
  const h = (hash2(col, row, seed) - 0.5) * 0.04;
  const k = 1 + h - bevel;
  const g = 0.74;
  set(out, 0.93 * k * (1 - grout) + g * grout, 0.935 * k * (1 - grout) + g * 0.99 * grout, 0.93 * k * (1 - grout) + g * 0.96 * grout, 0.5 * (1 - grout));
};

const plaster: Material = (u, v, fp, seed, out) => {
  const m = fbm(u * 0.01, v * 0.01, seed, 5, fp * 0.01) - 0.5;
  const f = (fbm(u * 0.4, v * 0.4, seed + 3, 3, fp * 0.4) - 0.5) * lodWeight(fp * 0.4);
  const k = 1 + m * 0.09 + f * 0.05;
  set(out, 0.87 * k, 0.85 * k, 0.81 * k, 0.02);
};

const paper: Material = (u, v, fp, seed, out) => {
  const m = fbm(u * 0.01, v * 0.01, seed, 3, fp * 0.01) - 0.5;
  const k = 1 + m * 0.03;
  set(out, 0.9 * k, 0.9 * k, 0.89 * k, 0.02);
};

/** Beach sand: fine grain, faint wind ripples, the odd darker fleck. */
const sand: Material = (u, v, fp, seed, out) => {
  const ripple = Math.sin((v * 0.55 + fbm(u * 0.02, v * 0.02, seed, 3, fp * 0.02) * 9) * Math.PI * 2) * 0.035 * lodWeight(fp * 0.55);
  const mottle = fbm(u * 0.03, v * 0.03, seed + 1, 4, fp * 0.03) - 0.5;
  const grain = (valueNoise(u * 3.1, v * 3.1, seed + 2) - 0.5) * 0.12 * lodWeight(fp * 3.1);
  const k = 1 + ripple + mottle * 0.12 + grain;
  set(out, 0.86 * k, 0.77 * k, 0.6 * k, 0.04);
};

/** Desert sand: warmer and redder, with long wind ripples across the dune. */
const dune: Material = (u, v, fp, seed, out) => {
  const warp = fbm(u * 0.01, v * 0.01, seed, 3, fp * 0.01) * 14;
  const ripple = (0.5 + 0.5 * Math.sin((v * 0.35 + u * 0.05 + warp) * Math.PI * 2)) ** 3 * 0.12 * lodWeight(fp * 0.35);
  const mottle = fbm(u * 0.015, v * 0.015, seed + 1, 4, fp * 0.015) - 0.5;
  const grain = (valueNoise(u * 3, v * 3, seed + 2) - 0.5) * 0.08 * lodWeight(fp * 3);
  const k = 1 - ripple + mottle * 0.16 + grain;
  set(out, 0.88 * k, 0.6 * k, 0.36 * k, 0.03);
};

/** Lawn seen from low: blades read as fine, vertically stretched noise over patches of colour. */
const grass: Material = (u, v, fp, seed, out) => {
  const patch = fbm(u * 0.02, v * 0.02, seed, 4, fp * 0.02) - 0.5;
  const blades = (valueNoise(u * 2.4, v * 0.6, seed + 3) - 0.5) * lodWeight(fp * 2.4);
  const fine = (valueNoise(u * 6, v * 1.5, seed + 4) - 0.5) * lodWeight(fp * 6);
  const dry = smoothstep(0.62, 0.8, fbm(u * 0.008, v * 0.008, seed + 5, 3, fp * 0.008));
  const k = 1 + patch * 0.35 + blades * 0.45 + fine * 0.3;
  set(out, (0.2 + dry * 0.25) * k, (0.42 + dry * 0.1) * k, (0.12 + dry * 0.02) * k, 0.05);
};

/** Forest floor: earth, moss and fallen leaves (soft-edged blobs of litter, not tiles). */
const forestfloor: Material = (u, v, fp, seed, out) => {
  const moss = smoothstep(0.5, 0.66, fbm(u * 0.02, v * 0.02, seed, 4, fp * 0.02));
  const litterN = fbm(u * 0.35, v * 0.35, seed + 7, 3, fp * 0.35);
  const leaf = smoothstep(0.5, 0.58, litterN) * lodWeight(fp * 0.35 * 0.5) + (1 - lodWeight(fp * 0.35 * 0.5)) * 0.35;
  const lh = valueNoise(u * 0.15, v * 0.15, seed + 8);
  const grit = (valueNoise(u * 2, v * 2, seed + 3) - 0.5) * 0.2 * lodWeight(fp * 2);
  const k = 1 + grit;
  let r = 0.36 - moss * 0.14,
    g = 0.27 + moss * 0.1,
    b = 0.18 - moss * 0.04;
  const lr = 0.55 + lh * 0.3,
    lg = 0.3 + lh * 0.18,
    lb = 0.12;
  r += (lr - r) * leaf * 0.75;
  g += (lg - g) * leaf * 0.75;
  b += (lb - b) * leaf * 0.75;
  set(out, r * k, g * k, b * k, 0.04);
};

/** Snow: bright, faintly blue, soft drifts and the odd sparkle. */
const snow: Material = (u, v, fp, seed, out) => {
  const drift = fbm(u * 0.012, v * 0.012, seed, 4, fp * 0.012) - 0.5;
  const crust = (valueNoise(u * 1.5, v * 1.5, seed + 2) - 0.5) * 0.05 * lodWeight(fp * 1.5);
  const sparkle = hash2(Math.floor(u / 0.4), Math.floor(v / 0.4), seed + 3) > 0.995 ? 0.15 * lodWeight(fp / 0.4) : 0;
  const k = 0.97 + drift * 0.07 + crust + sparkle;
  set(out, 0.9 * k, 0.93 * k, 0.97 * k, 0.12);
};

/** Weathered rock: ridged cracks, grey-brown mottling, lichen. */
const rock: Material = (u, v, fp, seed, out) => {
  const n = fbm(u * 0.03, v * 0.03, seed, 5, fp * 0.03);
  const ridge = 1 - Math.abs(fbm(u * 0.05 + 9, v * 0.05, seed + 1, 4, fp * 0.05) - 0.5) * 2;
  const crack = ridge ** 14 * lodWeight(fp * 0.05);
  const lichen = smoothstep(0.66, 0.76, fbm(u * 0.06, v * 0.06, seed + 4, 3, fp * 0.06));
  const grit = (valueNoise(u * 1.3, v * 1.3, seed + 5) - 0.5) * 0.14 * lodWeight(fp * 1.3);
  const k = 0.8 + (n - 0.5) * 0.55 + grit - crack * 0.45;
  set(out, (0.5 + lichen * 0.12) * k, (0.49 + lichen * 0.1) * k, (0.46 - lichen * 0.08) * k, 0.1);
};

/** Open sea: deep blue-green with wave crests across the view. */
const sea: Material = (u, v, fp, seed, out) => {
  const warp = fbm(u * 0.004, v * 0.004, seed, 3, fp * 0.004) * 30;
  const wave = Math.sin((v * 0.05 + warp) * Math.PI * 2) * 0.5 + 0.5;
  const chop = (fbm(u * 0.03, v * 0.08, seed + 1, 4, fp * 0.03) - 0.5) * lodWeight(fp * 0.05);
  const k = 0.85 + wave * 0.2 * lodWeight(fp * 0.05) + chop * 0.4;
  set(out, 0.1 * k, 0.36 * k, 0.5 * k, 0.9);
};

/** Pool water: turquoise over a pale floor, with the caustic network the sun throws. */
const pool: Material = (u, v, fp, seed, out) => {
  const w = fbm(u * 0.05, v * 0.05, seed, 3, fp * 0.05) * 4;
  const c1 = 1 - Math.abs(Math.sin((u * 0.09 + w) * Math.PI));
  const c2 = 1 - Math.abs(Math.sin((v * 0.09 - w * 0.8) * Math.PI));
  const caustic = (c1 ** 12 + c2 ** 12) * lodWeight(fp * 0.12);
  const k = 0.92 + caustic * 0.35;
  set(out, 0.3 * k, 0.72 * k, 0.8 * k, 0.85);
};

/** Travertine pavers: warm pale stone with small pits along the bedding and grout lines. */
const travertine: Material = (u, v, fp, seed, out) => {
  const pw = 60,
    ph = 40;
  const col = Math.floor(u / pw),
    row = Math.floor(v / ph);
  const tone = (hash2(col, row, seed) - 0.5) * 0.08;
  const band = (fbm(u * 0.01, v * 0.2, seed + 1, 3, fp * 0.2) - 0.5) * 0.12 * lodWeight(fp * 0.2);
  const pit = hash2(Math.floor(u / 0.8), Math.floor(v / 0.3), seed + 2) > 0.97 ? 0.2 * lodWeight(fp / 0.3) : 0;
  const seam = Math.max(groove(u, pw, 0.3, fp), groove(v, ph, 0.3, fp));
  const k = 1 + tone + band - pit - seam * 0.3;
  set(out, 0.88 * k, 0.82 * k, 0.72 * k, 0.15);
};

/** Asphalt: dark aggregate, fine grit, faint tar patches. */
const asphalt: Material = (u, v, fp, seed, out) => {
  const patch = fbm(u * 0.01, v * 0.01, seed, 3, fp * 0.01) - 0.5;
  const grit = (valueNoise(u * 2.5, v * 2.5, seed + 1) - 0.5) * lodWeight(fp * 2.5);
  const stone = hash2(Math.floor(u / 0.5), Math.floor(v / 0.5), seed + 2) > 0.93 ? 0.25 * lodWeight(fp / 0.5) : 0;
  const k = 1 + patch * 0.25 + grit * 0.25 + stone;
  set(out, 0.25 * k, 0.25 * k, 0.26 * k, 0.2);
};

/** Silk laid flat: smooth, with broad soft folds catching the light. */
const silk: Material = (u, v, fp, seed, out) => {
  const fold = fbm(u * 0.025, v * 0.05, seed, 4, fp * 0.05);
  const ridge = Math.sin((u * 0.06 + fold * 3) * Math.PI * 2) * 0.5 + 0.5;
  const k = 0.82 + ridge * 0.22 + (fold - 0.5) * 0.2;
  set(out, 0.92 * k, 0.88 * k, 0.84 * k, 0.5);
};

/** A hanging drape: vertical folds, deep shade between them, a sheen on the crests. */
const drape: Material = (u, v, fp, seed, out) => {
  const wob = fbm(u * 0.01, v * 0.008, seed, 3, fp * 0.01) * 18;
  const ph = ((u + wob) / 16) * Math.PI * 2;
  const fold = 0.5 + 0.5 * Math.sin(ph + 0.6 * Math.sin(ph * 0.5));
  const k = 0.55 + 0.5 * fold ** 0.7 + fold ** 18 * 0.12;
  set(out, 0.86 * k, 0.8 * k, 0.76 * k, 0.05);
};

/** A shelved wall seen out of focus: plaster, boards every 38 cm, jars and books standing on them. */
const shelves: Material = (u, v, fp, seed, out) => {
  plaster(u, v, fp, seed, out);
  const gap = 38;
  const row = Math.floor((v - 20) / gap);
  const lv = v - 20 - row * gap;
  if (lv < 2.5) {
    set(out, 0.66, 0.5, 0.34, 0.1);
    return;
  }
  // Shade under the board above.
  const under = smoothstep(gap - 6, gap, lv);
  const slot = Math.floor(u / 9);
  const h = hash2(slot, row, seed + 5);
  const objH = 8 + hash2(slot, row, seed + 6) * 20;
  const lu = u - slot * 9;
  if (h > 0.45 && lv < objH + 2.5 && lu > 1 && lu < 8) {
    const c = hash2(slot, row, seed + 7);
    const palette: [number, number, number][] = [
      [0.82, 0.78, 0.7],
      [0.45, 0.55, 0.5],
      [0.7, 0.5, 0.38],
      [0.3, 0.32, 0.36],
      [0.9, 0.88, 0.84],
    ];
    const p = palette[Math.floor(c * palette.length)]!;
    set(out, p[0], p[1], p[2], 0.1);
    return;
  }
  const k = 1 - under * 0.35;
  set(out, out[0]! * k, out[1]! * k, out[2]! * k, 0.02);
};

/** A glass or mirror-black acrylic top: dark, flat, very glossy (it shows the reflection). */
const glass: Material = (u, v, fp, seed, out) => {
  const m = fbm(u * 0.005, v * 0.005, seed, 2, fp * 0.005) - 0.5;
  const k = 1 + m * 0.1;
  set(out, 0.16 * k, 0.17 * k, 0.18 * k, 0.9);
};

export const MATERIALS: Record<MaterialId, Material> = {
  marble,
  wood,
  darkwood,
  concrete,
  metal,
  linen,
  brick,
  quartz,
  tile,
  plaster,
  paper,
  sand,
  dune,
  grass,
  forestfloor,
  snow,
  rock,
  sea,
  pool,
  travertine,
  asphalt,
  silk,
  drape,
  shelves,
  glass,
};

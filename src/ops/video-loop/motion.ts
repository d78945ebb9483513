import { seededRandom } from '../../media/random.js';
import type { Layers } from './layers.js';
import { valueNoise } from './noise.js';
import { cyclesFor, type MotionParams } from './prompt.js';
import type { BodyAnchor } from './person.js';
import type { Grid, Regions } from './regions.js';

/**
 * The subtle loop as a sum of modes: each term is a fixed spatial shape on the motion mesh
 * times a periodic coefficient of the loop phase phi (0..2pi over the whole clip). Every
 * coefficient is 0 at phi = 0 and has a whole number of cycles per loop, so frame 0 is the
 * input and the frame after the last is frame 0 again: the loop is seamless by construction.
 */

export type Target = 'sx' | 'sy' | 'bx' | 'by' | 'bg';
const TARGETS: readonly Target[] = ['sx', 'sy', 'bx', 'by', 'bg'];

export interface Term {
  /** sx/sy: subject displacement (px); bx/by: scene displacement (px); bg: scene gain (relative). */
  target: Target;
  basis: Float32Array;
  coef: (phi: number) => number;
}

export interface MotionModel {
  grid: Grid;
  terms: Term[];
  /** Largest subject displacement in px, to size the subject's render window. */
  subjectReach: number;
  /** Cycles per loop of each motion, for meta. */
  cycles: Record<string, number>;
}

/** Natural periods in seconds before the prompt's periodScale. */
const PERIOD = { body: 4.5, foliage: 2.5, water: 3, shimmer: 1.6 };

const sinK = (k: number) => (phi: number) => Math.sin(k * phi);
const cosK1 = (k: number) => (phi: number) => Math.cos(k * phi) - 1;

/** Adds a travelling wave A*w*(sin(k phi + psi) - sin(psi)) split into two linear modes. */
function wave(terms: Term[], target: Target, weight: Float32Array, psi: Float32Array, amp: number, k: number): void {
  const n = weight.length;
  const c = new Float32Array(n),
    s = new Float32Array(n);
  let any = false;
  for (let o = 0; o < n; o++) {
    const w = weight[o]! * amp;
    if (w === 0) continue;
    any = true;
    c[o] = w * Math.cos(psi[o]!);
    s[o] = w * Math.sin(psi[o]!);
  }
  if (!any) return;
  terms.push({ target, basis: c, coef: sinK(k) }, { target, basis: s, coef: cosK1(k) });
}

export function buildSubtleModel(
  layers: Layers,
  regions: Regions,
  grid: Grid,
  params: MotionParams,
  durationSec: number,
  seed: number,
  body: BodyAnchor | null = null,
): MotionModel {
  const { width, height, box } = layers;
  const { cell, gw, gh } = grid;
  const n = gw * gh;
  const short = Math.min(width, height);
  const rand = seededRandom(seed);
  const terms: Term[] = [];
  const cyc = (p: number) => cyclesFor(durationSec, p * params.periodScale);
  const cycles: Record<string, number> = {};
  let subjectReach = 0;

  if (box) {
    // Subject: a bend that grows with height above the base (sway) and a stretch about the base
    // with a slight widening of the upper body (breathing). The base stays planted.
    const hs = box.y1 - box.y0 + 1,
      ws = box.x1 - box.x0 + 1;
    let sumA = 0,
      sumX = 0;
    for (let y = box.y0; y <= box.y1; y += 2) {
      for (let x = box.x0; x <= box.x1; x += 2) {
        const a = layers.alpha[y * width + x]!;
        sumA += a;
        sumX += a * x;
      }
    }
    const cx = sumA ? sumX / sumA : (box.x0 + box.x1) / 2;
    const swayX = new Float32Array(n),
      breatheX = new Float32Array(n),
      breatheY = new Float32Array(n);
    if (body) bodyBases(body, box, grid, swayX, breatheX, breatheY);
    else
      for (let j = 0; j < gh; j++) {
        const v = Math.min(1, Math.max(0, (box.y1 - j * cell) / hs));
        const bump = Math.exp(-(((v - 0.65) / 0.22) ** 2));
        for (let i = 0; i < gw; i++) {
          const o = j * gw + i;
          const u = (i * cell - cx) / (ws / 2);
          swayX[o] = hs * v ** 1.5;
          breatheY[o] = -hs * v;
          breatheX[o] = 0.5 * (ws / 2) * Math.max(-1.5, Math.min(1.5, u)) * bump;
        }
      }
    // Sway and breathing share one rhythm in quadrature (sin / 1 - cos): one is at rest while
    // the other moves fastest, so the subject never stalls and then lurches, and the frame-to-
    // frame change stays even over the loop.
    const k = cyc(PERIOD.body);
    cycles.body = k;
    const a1 = params.sway,
      a2 = params.sway * 0.15,
      ph = 0.9;
    terms.push({ target: 'sx', basis: swayX, coef: (phi) => a1 * Math.sin(k * phi) + a2 * (Math.sin(2 * k * phi + ph) - Math.sin(ph)) });
    const breathe = (phi: number) => (params.breathing * (1 - Math.cos(k * phi))) / 2;
    terms.push({ target: 'sy', basis: breatheY, coef: breathe }, { target: 'sx', basis: breatheX, coef: breathe });
    const peak = (b: Float32Array) => b.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
    subjectReach = Math.ceil(1.2 * params.sway * peak(swayX) + params.breathing * Math.max(peak(breatheX), peak(breatheY)) + 2);
  }

  // Scene: sky drifts sideways once per loop; foliage flutters in a wind wave crossing the
  // frame; water ripples travel down the frame; highlights shimmer in a finer travelling wave.
  const skyAmp = params.sky * width;
  if (skyAmp > 0) {
    terms.push({ target: 'bx', basis: regions.sky.map((w) => w * skyAmp), coef: (phi) => Math.sin(phi) });
    cycles.sky = 1;
  }
  const noiseA = valueNoise(gw, gh, Math.max(4, Math.round(gw / 8)), rand);
  const noiseB = valueNoise(gw, gh, Math.max(2, Math.round(gw / 24)), rand);
  const psiWind = new Float32Array(n),
    psiFlutter = new Float32Array(n),
    psiWater = new Float32Array(n),
    psiShine = new Float32Array(n);
  const lambdaWind = 0.45 * width,
    lambdaWater = 0.05 * height,
    lambdaShine = 0.025 * height;
  for (let j = 0; j < gh; j++) {
    for (let i = 0; i < gw; i++) {
      const o = j * gw + i,
        x = i * cell,
        y = j * cell;
      psiWind[o] = 2 * Math.PI * (x / lambdaWind + 0.8 * noiseA[o]!);
      psiFlutter[o] = 2 * Math.PI * 3 * noiseB[o]!;
      psiWater[o] = 2 * Math.PI * (y / lambdaWater + 0.5 * noiseA[o]!);
      psiShine[o] = 2 * Math.PI * (y / lambdaShine + x / (4 * lambdaShine) + noiseB[o]!);
    }
  }
  const kf = cyc(PERIOD.foliage),
    kw = cyc(PERIOD.water),
    kh = cyc(PERIOD.shimmer);
  cycles.foliage = kf;
  cycles.water = kw;
  cycles.shimmer = kh;
  const fAmp = params.foliage * short,
    wAmp = params.water * short;
  wave(terms, 'bx', regions.foliage, psiWind, fAmp, kf);
  wave(
    terms,
    'by',
    regions.foliage,
    psiWind.map((p) => p + 1.3),
    fAmp * 0.35,
    kf,
  );
  wave(terms, 'bx', regions.foliage, psiFlutter, fAmp * 0.4, 2 * kf);
  wave(terms, 'by', regions.water, psiWater, wAmp, kw);
  wave(
    terms,
    'bx',
    regions.water,
    psiWater.map((p) => p + Math.PI / 2),
    wAmp * 0.5,
    kw,
  );
  wave(terms, 'bg', regions.highlight, psiShine, params.shimmer, kh);
  return { grid, terms, subjectReach, cycles };
}

/**
 * The subject's sway and breathing shapes for a person (person.ts): the sway bends about the
 * hip line (legs planted; a bust's hips are below the frame, so the whole bust sways gently),
 * the breath lifts the shoulders and everything above them rigidly (the face is carried, not
 * stretched) fading to nothing at the hips, and widens the ribcage about the chest centre.
 * Same units as the generic shapes, so the prompt's amplitudes mean the same.
 */
function bodyBases(body: BodyAnchor, box: NonNullable<Layers['box']>, grid: Grid, swayX: Float32Array, breatheX: Float32Array, breatheY: Float32Array): void {
  const { cell, gw, gh } = grid;
  const pivot = Math.max(body.hipY, body.shoulderY + 1);
  const hs = Math.max(1, pivot - box.y0);
  const torso = pivot - body.shoulderY;
  const r = 0.6 * body.shoulderWidth;
  for (let j = 0; j < gh; j++) {
    const y = j * cell;
    const v = Math.min(1, Math.max(0, (pivot - y) / hs));
    const lift = Math.min(1, Math.max(0, (pivot - y) / torso));
    for (let i = 0; i < gw; i++) {
      const o = j * gw + i,
        x = i * cell;
      const dx = x - body.chest.x,
        dy = y - body.chest.y;
      const g = Math.exp(-(dx * dx + dy * dy) / (2 * r * r));
      // At the top of the subject the sway is as large as the generic one's.
      swayX[o] = (box.y1 - box.y0 + 1) * v ** 1.5;
      // The generic breath lifts the top by the subject's height; here the shoulders rise by a
      // torso length (x breathing), and the chest widens by half its offset from the centre.
      breatheY[o] = -torso * lift + 0.25 * dy * g;
      breatheX[o] = 0.5 * dx * g;
    }
  }
}

export type Fields = Record<Target, Float32Array>;

export function allocFields(grid: Grid): Fields {
  const n = grid.gw * grid.gh;
  return { sx: new Float32Array(n), sy: new Float32Array(n), bx: new Float32Array(n), by: new Float32Array(n), bg: new Float32Array(n) };
}

/** Evaluates the mesh displacement and gain fields at loop phase phi. */
export function fieldsAt(model: MotionModel, phi: number, out: Fields): Fields {
  for (const t of TARGETS) out[t].fill(0);
  for (const term of model.terms) {
    const c = term.coef(phi);
    if (c === 0) continue;
    const f = out[term.target],
      b = term.basis;
    for (let o = 0; o < f.length; o++) f[o] += c * b[o]!;
  }
  return out;
}

/** Mesh cells (by their top-left node) where any scene term is non-zero at a corner. */
export function activeSceneCells(model: MotionModel): Uint8Array {
  const { gw, gh } = model.grid;
  const node = new Uint8Array(gw * gh);
  for (const t of model.terms) {
    if (t.target === 'sx' || t.target === 'sy') continue;
    for (let o = 0; o < node.length; o++) if (Math.abs(t.basis[o]!) > 1e-4) node[o] = 1;
  }
  const cells = new Uint8Array(gw * gh);
  for (let j = 0; j < gh - 1; j++) {
    for (let i = 0; i < gw - 1; i++) {
      const o = j * gw + i;
      cells[o] = node[o]! | node[o + 1]! | node[o + gw]! | node[o + gw + 1]!;
    }
  }
  return cells;
}

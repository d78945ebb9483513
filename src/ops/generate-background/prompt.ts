import { seededRandom } from '../../media/random.js';
import type { MaterialId } from './materials.js';
import { cloneSpec, LIGHT_COLOURS, PRESETS, type Rgb, type SceneSpec } from './scenes.js';

/**
 * Prompt -> scene parameters through a fixed, documented vocabulary (docs/ops/generate-background.md).
 * Words the vocabulary does not know are ignored (and reported in meta), so "a warm wooden
 * table by a sunny window" reads as: wood, warm, sunlight, window.
 */

/** Numeric knobs every lighting and mood word nudges; negative prompts nudge them backwards. */
interface Knobs {
  warmth: number;
  brightness: number;
  softness: number;
  contrast: number;
  saturation: number;
  vignette: number;
}

interface LightingTerm {
  words: string[];
  knobs?: Partial<Knobs>;
  /** Sets the key light's colour, direction and the window patch (time of day). */
  time?: { color: Rgb; azimuth: number; elevation: number; window?: boolean; exposure?: number; ambient?: number };
  window?: boolean;
  /** Material suggestion when the prompt names none (mood words). */
  suggests?: string;
}

export const MATERIAL_WORDS: Record<string, MaterialId> = {
  marble: 'marble', marbled: 'marble', carrara: 'marble',
  wood: 'wood', wooden: 'wood', oak: 'wood', timber: 'wood', pine: 'wood', plank: 'wood', planks: 'wood', maple: 'wood', birch: 'wood',
  walnut: 'darkwood', mahogany: 'darkwood', ebony: 'darkwood', teak: 'darkwood',
  concrete: 'concrete', cement: 'concrete', stone: 'concrete', slate: 'concrete',
  metal: 'metal', steel: 'metal', metallic: 'metal', iron: 'metal', aluminium: 'metal', aluminum: 'metal',
  linen: 'linen', cloth: 'linen', fabric: 'linen', cotton: 'linen', tablecloth: 'linen', textile: 'linen',
  brick: 'brick', bricks: 'brick', brickwork: 'brick',
  quartz: 'quartz', granite: 'quartz', terrazzo: 'quartz', countertop: 'quartz',
  tile: 'tile', tiles: 'tile', tiled: 'tile', ceramic: 'tile', backsplash: 'tile',
  plaster: 'plaster', stucco: 'plaster', painted: 'plaster',
  paper: 'paper', seamless: 'paper',
};

/** Materials that are only ever walls, or only ever tables, whatever their position in the text. */
const WALL_ONLY = new Set<MaterialId>(['brick', 'tile', 'plaster']);
const FLOOR_ONLY = new Set<MaterialId>(['linen', 'quartz']);

/** Which preset a material word implies, for the parts of the scene the prompt leaves open. */
const MATERIAL_PRESET: Partial<Record<MaterialId, string>> = {
  marble: 'marble', wood: 'wood', darkwood: 'wood', concrete: 'industrial', metal: 'industrial',
  linen: 'linen', brick: 'brick', quartz: 'counter', tile: 'counter',
};

const WALL_NOUNS = new Set(['wall', 'walls', 'backdrop', 'background', 'backsplash', 'behind']);
const FLOOR_NOUNS = new Set(['table', 'tabletop', 'floor', 'surface', 'counter', 'countertop', 'desk', 'top', 'slab', 'board', 'shelf', 'ground']);

export const COLOUR_WORDS: Record<string, Rgb> = {
  white: [0.95, 0.95, 0.94], black: [0.12, 0.12, 0.13], grey: [0.55, 0.56, 0.57], gray: [0.55, 0.56, 0.57],
  beige: [0.85, 0.76, 0.62], cream: [0.93, 0.88, 0.76], ivory: [0.94, 0.91, 0.82], sand: [0.84, 0.74, 0.57],
  brown: [0.5, 0.33, 0.2], tan: [0.78, 0.62, 0.44], chocolate: [0.36, 0.22, 0.14],
  red: [0.8, 0.16, 0.14], burgundy: [0.5, 0.1, 0.16], terracotta: [0.8, 0.42, 0.3], rust: [0.7, 0.33, 0.18],
  pink: [0.95, 0.62, 0.7], blush: [0.94, 0.74, 0.74], rose: [0.9, 0.5, 0.58],
  orange: [0.95, 0.52, 0.16], peach: [0.98, 0.74, 0.6], coral: [0.96, 0.5, 0.42],
  yellow: [0.96, 0.84, 0.25], gold: [0.85, 0.68, 0.3], golden: [0.88, 0.7, 0.32], mustard: [0.82, 0.66, 0.2],
  green: [0.25, 0.62, 0.3], sage: [0.62, 0.7, 0.56], olive: [0.5, 0.52, 0.26], mint: [0.64, 0.88, 0.74], emerald: [0.1, 0.55, 0.35],
  teal: [0.1, 0.52, 0.55], turquoise: [0.2, 0.75, 0.75], cyan: [0.3, 0.8, 0.88],
  blue: [0.2, 0.4, 0.85], navy: [0.12, 0.18, 0.4], sky: [0.55, 0.75, 0.95],
  purple: [0.52, 0.28, 0.7], lavender: [0.72, 0.66, 0.88], lilac: [0.78, 0.65, 0.85], violet: [0.55, 0.3, 0.8],
};

export const LIGHTING_TERMS: LightingTerm[] = [
  { words: ['sunset', 'golden hour', 'dusk', 'sundown'], time: { color: LIGHT_COLOURS.sunset, azimuth: 125, elevation: 9, window: true, exposure: 1.1, ambient: 0.55 }, knobs: { warmth: 0.3, softness: -0.2, contrast: 0.08 } },
  { words: ['sunrise', 'dawn', 'morning'], time: { color: LIGHT_COLOURS.morning, azimuth: -75, elevation: 18, window: true, exposure: 1.05 }, knobs: { softness: -0.1 } },
  { words: ['noon', 'midday', 'daylight', 'sunny', 'sunlight', 'sunlit', 'sun'], time: { color: LIGHT_COLOURS.neutral, azimuth: -50, elevation: 55, window: true, exposure: 1.1 }, knobs: { softness: -0.35, brightness: 0.15 } },
  { words: ['night', 'evening', 'moonlight', 'midnight'], time: { color: LIGHT_COLOURS.night, azimuth: 60, elevation: 30, exposure: 0.7, ambient: 0.7 }, knobs: { brightness: -0.45, contrast: 0.1, vignette: 0.25 } },
  { words: ['candle', 'candlelight', 'candlelit', 'firelight'], time: { color: LIGHT_COLOURS.candle, azimuth: -80, elevation: 12, exposure: 0.8, ambient: 0.6 }, knobs: { brightness: -0.35, warmth: 0.3, vignette: 0.3 } },
  { words: ['studio', 'softbox', 'product'], knobs: { softness: 0.25, vignette: -0.1 }, window: false },
  { words: ['soft', 'diffused', 'diffuse', 'overcast', 'cloudy', 'gentle'], knobs: { softness: 0.35, contrast: -0.08 } },
  { words: ['hard', 'harsh', 'dramatic', 'contrasty', 'spotlight', 'spotlit', 'bold'], knobs: { softness: -0.4, contrast: 0.15, vignette: 0.2 } },
  { words: ['dark', 'dim', 'moody', 'low-key', 'shadowy', 'gloomy', 'noir'], knobs: { brightness: -0.55, vignette: 0.25, contrast: 0.08 } },
  { words: ['bright', 'light', 'airy', 'high-key', 'luminous', 'radiant'], knobs: { brightness: 0.4, vignette: -0.15 } },
  { words: ['warm', 'golden', 'cozy', 'cosy', 'toasty', 'autumn', 'autumnal'], knobs: { warmth: 0.65 } },
  { words: ['cool', 'cold', 'icy', 'clinical', 'winter', 'wintry'], knobs: { warmth: -0.65 } },
  { words: ['window', 'windowsill'], window: true },
  { words: ['luxury', 'luxurious', 'elegant', 'premium', 'opulent'], knobs: { contrast: 0.1, brightness: -0.1 }, suggests: 'marble' },
  { words: ['minimal', 'minimalist', 'clean', 'simple'], knobs: { softness: 0.2, brightness: 0.2, saturation: -0.15, vignette: -0.1 }, suggests: 'linen' },
  { words: ['rustic', 'farmhouse', 'cabin'], knobs: { warmth: 0.3 }, suggests: 'wood' },
  { words: ['modern', 'urban', 'loft', 'industrial', 'factory', 'warehouse'], knobs: { warmth: -0.15, contrast: 0.05 }, suggests: 'industrial' },
  { words: ['natural', 'organic', 'earthy'], knobs: { warmth: 0.2 }, suggests: 'wood' },
  { words: ['kitchen', 'bathroom', 'counter', 'cafe'], suggests: 'counter' },
  { words: ['vintage', 'retro', 'nostalgic'], knobs: { saturation: -0.2, warmth: 0.3 } },
  { words: ['fresh', 'spring', 'summer'], knobs: { brightness: 0.2, saturation: 0.1 } },
  { words: ['calm', 'serene', 'peaceful', 'quiet'], knobs: { softness: 0.25, contrast: -0.06 } },
  { words: ['vibrant', 'colourful', 'colorful', 'vivid', 'saturated'], knobs: { saturation: 0.3 } },
  { words: ['muted', 'pastel', 'desaturated', 'subdued'], knobs: { saturation: -0.3, brightness: 0.1 } },
];

/** Hue family of each material's own colour, so "no red" can tone down a red brick wall. */
const MATERIAL_HUE: Partial<Record<MaterialId, string[]>> = {
  brick: ['red', 'orange', 'terracotta', 'brown', 'rust'],
  wood: ['brown', 'orange', 'tan', 'yellow'],
  darkwood: ['brown', 'red', 'chocolate'],
  linen: ['beige', 'cream', 'tan', 'sand'],
  metal: ['grey', 'gray', 'blue'],
  concrete: ['grey', 'gray'],
  marble: ['white'], quartz: ['white'], tile: ['white'], plaster: ['white', 'cream'], paper: ['white'],
};

export interface ParsedScene {
  spec: SceneSpec;
  /** Vocabulary terms recognised, for meta and debugging prompts. */
  terms: string[];
  /** Terms of the negative prompt that were applied. */
  negated: string[];
}

function tokenize(text: string): string[] {
  // Commas and full stops end a clause: "blue, linen table" does not make the table blue.
  const words = text.toLowerCase().replace(/[,.;:!?]/g, ' | ').replace(/[^a-z|\s-]/g, ' ').split(/\s+/).filter(Boolean);
  // Fuse the two-word phrases the vocabulary knows.
  const out: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const pair = `${words[i]} ${words[i + 1] ?? ''}`;
    if (pair === 'golden hour') { out.push(pair); i++; continue; }
    if (pair === 'low key') { out.push('low-key'); i++; continue; }
    if (pair === 'high key') { out.push('high-key'); i++; continue; }
    out.push(words[i]!);
  }
  return out;
}

const lightingIndex = new Map<string, LightingTerm>();
for (const t of LIGHTING_TERMS) for (const w of t.words) lightingIndex.set(w, t);

/** Where a material or colour word points: the next surface noun within three words decides. */
function surfaceOf(tokens: string[], i: number): 'wall' | 'floor' | undefined {
  for (let j = i + 1; j < Math.min(tokens.length, i + 4); j++) {
    if (tokens[j] === '|') return undefined;
    if (WALL_NOUNS.has(tokens[j]!)) return 'wall';
    if (FLOOR_NOUNS.has(tokens[j]!)) return 'floor';
    if (MATERIAL_WORDS[tokens[j]!] && j > i + 1) return undefined;
  }
  return undefined;
}

function mixRgb(a: Rgb, b: Rgb, t: number): Rgb {
  return [a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t, a[2] + (b[2] - a[2]) * t];
}

const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));

/**
 * Builds a scene from a prompt. `seed` only breaks ties (a prompt naming no material and no
 * mood picks a preset from the seed), so the same prompt and seed give the same scene.
 */
export function parsePrompt(prompt: string, negative: string | undefined, seed: number): ParsedScene {
  const tokens = tokenize(prompt);
  const negTokens = negative ? negative.split(',').flatMap((part) => tokenize(part)) : [];
  const neg = new Set(negTokens);
  const terms: string[] = [];
  const negated: string[] = [];

  let floor: MaterialId | undefined;
  let wall: MaterialId | undefined;
  let suggested: string | undefined;
  const floorColours: Rgb[] = [];
  const wallColours: Rgb[] = [];
  const freeColours: Rgb[] = [];
  const knobs: Knobs = { warmth: 0, brightness: 0, softness: 0, contrast: 0, saturation: 0, vignette: 0 };
  let time: LightingTerm['time'];
  let window: boolean | undefined;

  const apply = (t: LightingTerm, sign: number) => {
    for (const [k, v] of Object.entries(t.knobs ?? {})) knobs[k as keyof Knobs] += sign * (v as number);
    if (sign > 0) {
      if (t.time) time = t.time;
      if (t.window !== undefined) window = t.window;
      if (t.suggests && !suggested) suggested = t.suggests;
    } else if (t.window || t.time?.window) {
      window = false;
    }
  };

  for (let i = 0; i < tokens.length; i++) {
    const w = tokens[i]!;
    if (neg.has(w)) continue;
    const mat = MATERIAL_WORDS[w];
    if (mat) {
      const where = WALL_ONLY.has(mat) ? 'wall' : FLOOR_ONLY.has(mat) ? 'floor' : surfaceOf(tokens, i) ?? (floor ? 'wall' : 'floor');
      if (where === 'wall' && !wall) wall = mat;
      else if (where === 'floor' && !floor) floor = mat;
      terms.push(`${w}->${where}:${mat}`);
      continue;
    }
    const col = COLOUR_WORDS[w];
    if (col && !(w === 'light' || w === 'golden')) {
      const where = surfaceOf(tokens, i);
      (where === 'wall' ? wallColours : where === 'floor' ? floorColours : freeColours).push(col);
      terms.push(`${w}->${where ?? 'colour'}`);
      continue;
    }
    const lt = lightingIndex.get(w);
    if (lt) {
      apply(lt, 1);
      terms.push(w);
      // "golden" is both a colour and a light: as a light word it warms.
    }
  }

  // Negative prompt: attributes are countered, not just dropped.
  const excluded = new Set<MaterialId>();
  const avoidColours = new Set<string>();
  for (const w of new Set(negTokens)) {
    const mat = MATERIAL_WORDS[w];
    if (mat) { excluded.add(mat); negated.push(w); continue; }
    if (COLOUR_WORDS[w]) { avoidColours.add(w); negated.push(w); continue; }
    const lt = lightingIndex.get(w);
    if (lt) { apply(lt, -0.7); negated.push(w); }
  }
  if (floor && excluded.has(floor)) floor = undefined;
  if (wall && excluded.has(wall)) wall = undefined;

  // Base preset: the table's material decides, then the wall's, then mood words, then the seed.
  const presetNames = Object.keys(PRESETS);
  const allowed = (name: string) => !excluded.has(PRESETS[name]!.floor) && !excluded.has(PRESETS[name]!.wall);
  let presetName =
    (floor && MATERIAL_PRESET[floor]) || (wall && MATERIAL_PRESET[wall]) || suggested || presetNames[Math.floor(seededRandom(seed ^ 0xabc)() * presetNames.length)]!;
  if (!allowed(presetName)) {
    const r = seededRandom(seed ^ 0xdef);
    const candidates = presetNames.filter(allowed);
    presetName = candidates.length ? candidates[Math.floor(r() * candidates.length)]! : presetName;
  }
  const spec = cloneSpec(PRESETS[presetName]!);
  spec.name = 'prompt';
  if (floor) spec.floor = floor;
  if (wall) spec.wall = wall;
  if (excluded.has(spec.floor)) spec.floor = excluded.has('paper') ? 'plaster' : 'paper';
  if (excluded.has(spec.wall)) spec.wall = excluded.has('plaster') ? 'paper' : 'plaster';
  if (floor || wall) delete spec.wallTint;

  if (time) {
    spec.light.color = time.color;
    spec.light.azimuth = time.azimuth;
    spec.light.elevation = time.elevation;
    spec.exposure *= time.exposure ?? 1;
    spec.ambient.intensity *= time.ambient ?? 1;
    if (time.ambient) spec.ambient.color = mixRgb(spec.ambient.color, time.color, 0.35);
    if (time.window) spec.window = true;
  }
  if (window !== undefined) spec.window = window;

  // Colours: a colour tied to a surface tints it strongly; a free colour tints the whole set,
  // the wall more (it is most of the frame behind the subject).
  const avg = (cs: Rgb[]): Rgb | undefined => (cs.length ? (cs.reduce((a, c) => [a[0] + c[0], a[1] + c[1], a[2] + c[2]], [0, 0, 0] as Rgb).map((v) => v / cs.length) as Rgb) : undefined);
  const fc = avg(floorColours), wc = avg(wallColours), free = avg(freeColours);
  if (fc) spec.floorTint = { rgb: fc, amount: 0.75 };
  else if (free) spec.floorTint = { rgb: free, amount: 0.45 };
  if (wc) spec.wallTint = { rgb: wc, amount: 0.8 };
  else if (free) spec.wallTint = { rgb: free, amount: 0.7 };

  // An unwanted colour that is the material's own: neutralise it towards grey.
  for (const surface of ['floor', 'wall'] as const) {
    const mat = spec[surface];
    const tintKey = surface === 'floor' ? 'floorTint' : 'wallTint';
    const hues = MATERIAL_HUE[mat] ?? [];
    if ([...avoidColours].some((c) => hues.includes(c)) && !spec[tintKey]) spec[tintKey] = { rgb: [0.6, 0.6, 0.6], amount: 0.6 };
  }
  if (avoidColours.has('white')) knobs.brightness -= 0.25;
  if (avoidColours.has('black')) knobs.brightness += 0.25;

  // Knobs onto the physical parameters.
  const warm = clamp(knobs.warmth, -1, 1);
  if (warm > 0) spec.light.color = mixRgb(spec.light.color, LIGHT_COLOURS.sunset, warm * 0.6);
  if (warm < 0) spec.light.color = mixRgb(spec.light.color, LIGHT_COLOURS.night, -warm * 0.75);
  spec.ambient.color = mixRgb(spec.ambient.color, warm >= 0 ? [1.0, 0.85, 0.7] : [0.72, 0.84, 1.0], Math.abs(warm) * 0.5);
  spec.exposure *= Math.pow(2, clamp(knobs.brightness, -1, 1) * 1.3);
  spec.light.softness = clamp(spec.light.softness + knobs.softness, 0.05, 1);
  spec.contrast = clamp(spec.contrast * (1 + knobs.contrast), 0.7, 1.4);
  spec.saturation = clamp(spec.saturation * (1 + knobs.saturation), 0.3, 1.6);
  spec.vignette = clamp(spec.vignette + knobs.vignette, 0, 0.8);

  return { spec, terms, negated };
}

import { seededRandom } from '../../media/random.js';
import type { MaterialId } from './materials.js';
import { cloneSpec, LIGHT_COLOURS, PRESETS, type Rgb, type SceneSpec } from './scenes.js';
import { familySpec, type FamilyId } from './families.js';
import { SKIES } from './sky.js';

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

type TimeId = 'golden' | 'dusk' | 'morning' | 'day' | 'night' | 'candle';

interface LightingTerm {
  words: string[];
  knobs?: Partial<Knobs>;
  /** Sets the key light's colour, direction and the window patch (time of day). */
  time?: { id: TimeId; color: Rgb; azimuth: number; elevation: number; window?: boolean; exposure?: number; ambient?: number };
  /** Weather: the sky outdoors, and the light's quality everywhere. */
  weather?: 'overcast' | 'rain' | 'storm' | 'fog' | 'clear';
  window?: boolean;
  /** Material suggestion when the prompt names none (mood words). */
  suggests?: string;
}

export const MATERIAL_WORDS: Record<string, MaterialId> = {
  marble: 'marble',
  marbled: 'marble',
  carrara: 'marble',
  wood: 'wood',
  wooden: 'wood',
  oak: 'wood',
  timber: 'wood',
  pine: 'wood',
  plank: 'wood',
  planks: 'wood',
  maple: 'wood',
  birch: 'wood',
  walnut: 'darkwood',
  mahogany: 'darkwood',
  ebony: 'darkwood',
  teak: 'darkwood',
  concrete: 'concrete',
  cement: 'concrete',
  stone: 'concrete',
  slate: 'concrete',
  metal: 'metal',
  steel: 'metal',
  metallic: 'metal',
  iron: 'metal',
  aluminium: 'metal',
  aluminum: 'metal',
  linen: 'linen',
  cloth: 'linen',
  fabric: 'linen',
  cotton: 'linen',
  tablecloth: 'linen',
  textile: 'linen',
  brick: 'brick',
  bricks: 'brick',
  brickwork: 'brick',
  quartz: 'quartz',
  granite: 'quartz',
  terrazzo: 'quartz',
  countertop: 'quartz',
  tile: 'tile',
  tiles: 'tile',
  tiled: 'tile',
  ceramic: 'tile',
  backsplash: 'tile',
  plaster: 'plaster',
  stucco: 'plaster',
  painted: 'plaster',
  paper: 'paper',
  kraft: 'paper',
  glass: 'glass',
  acrylic: 'glass',
  resin: 'glass',
  plexiglass: 'glass',
  obsidian: 'glass',
  asphalt: 'asphalt',
  tarmac: 'asphalt',
  travertine: 'travertine',
  limestone: 'travertine',
  sandstone: 'travertine',
  rattan: 'wood',
  wicker: 'wood',
  bamboo: 'wood',
  cork: 'wood',
  driftwood: 'wood',
  wool: 'linen',
  felt: 'linen',
  knit: 'linen',
  knitted: 'linen',
  burlap: 'linen',
  jute: 'linen',
  canvas: 'linen',
  porcelain: 'tile',
  mosaic: 'tile',
  zellige: 'tile',
};

/** How much of the subject a glossy ground mirrors (the water, marble and glass). */
export const MATERIAL_REFLECT: Partial<Record<MaterialId, number>> = { glass: 0.45, sea: 0.5, pool: 0.5, marble: 0.14, quartz: 0.1, tile: 0.1, metal: 0.12 };

/** Materials that are only ever walls, or only ever tables, whatever their position in the text. */
const WALL_ONLY = new Set<MaterialId>(['brick', 'tile', 'plaster']);
const FLOOR_ONLY = new Set<MaterialId>(['linen', 'quartz']);

/** Which preset a material word implies, for the parts of the scene the prompt leaves open. */
const MATERIAL_PRESET: Partial<Record<MaterialId, string>> = {
  marble: 'marble',
  wood: 'wood',
  darkwood: 'wood',
  concrete: 'industrial',
  metal: 'industrial',
  linen: 'linen',
  brick: 'brick',
  quartz: 'counter',
  tile: 'counter',
};

const WALL_NOUNS = new Set(['wall', 'walls', 'backdrop', 'background', 'backsplash', 'behind']);
const FLOOR_NOUNS = new Set(['table', 'tabletop', 'floor', 'surface', 'counter', 'countertop', 'desk', 'top', 'slab', 'board', 'shelf', 'ground']);

export const COLOUR_WORDS: Record<string, Rgb> = {
  white: [0.95, 0.95, 0.94],
  black: [0.12, 0.12, 0.13],
  grey: [0.55, 0.56, 0.57],
  gray: [0.55, 0.56, 0.57],
  beige: [0.85, 0.76, 0.62],
  cream: [0.93, 0.88, 0.76],
  ivory: [0.94, 0.91, 0.82],
  sand: [0.84, 0.74, 0.57],
  brown: [0.5, 0.33, 0.2],
  tan: [0.78, 0.62, 0.44],
  chocolate: [0.36, 0.22, 0.14],
  red: [0.8, 0.16, 0.14],
  burgundy: [0.5, 0.1, 0.16],
  terracotta: [0.8, 0.42, 0.3],
  rust: [0.7, 0.33, 0.18],
  pink: [0.95, 0.62, 0.7],
  blush: [0.94, 0.74, 0.74],
  rose: [0.9, 0.5, 0.58],
  orange: [0.95, 0.52, 0.16],
  peach: [0.98, 0.74, 0.6],
  coral: [0.96, 0.5, 0.42],
  yellow: [0.96, 0.84, 0.25],
  gold: [0.85, 0.68, 0.3],
  golden: [0.88, 0.7, 0.32],
  mustard: [0.82, 0.66, 0.2],
  green: [0.25, 0.62, 0.3],
  sage: [0.62, 0.7, 0.56],
  olive: [0.5, 0.52, 0.26],
  mint: [0.64, 0.88, 0.74],
  emerald: [0.1, 0.55, 0.35],
  teal: [0.1, 0.52, 0.55],
  turquoise: [0.2, 0.75, 0.75],
  cyan: [0.3, 0.8, 0.88],
  blue: [0.2, 0.4, 0.85],
  navy: [0.12, 0.18, 0.4],
  sky: [0.55, 0.75, 0.95],
  purple: [0.52, 0.28, 0.7],
  lavender: [0.72, 0.66, 0.88],
  lilac: [0.78, 0.65, 0.85],
  violet: [0.55, 0.3, 0.8],
};

export const LIGHTING_TERMS: LightingTerm[] = [
  {
    words: ['sunset', 'golden hour', 'sundown', 'sunsets'],
    time: { id: 'golden', color: LIGHT_COLOURS.sunset, azimuth: 125, elevation: 9, window: true, exposure: 1.1, ambient: 0.55 },
    knobs: { warmth: 0.3, softness: -0.2, contrast: 0.08 },
  },
  {
    words: ['dusk', 'twilight', 'blue hour', 'evening'],
    time: { id: 'dusk', color: [1.0, 0.62, 0.45], azimuth: 140, elevation: 5, window: true, exposure: 0.85, ambient: 0.7 },
    knobs: { warmth: 0.1, brightness: -0.2, contrast: 0.05 },
  },
  {
    words: ['sunrise', 'dawn', 'morning', 'daybreak'],
    time: { id: 'morning', color: LIGHT_COLOURS.morning, azimuth: -75, elevation: 18, window: true, exposure: 1.05 },
    knobs: { softness: -0.1 },
  },
  {
    words: ['noon', 'midday', 'day', 'daylight', 'daytime', 'sunny', 'sunlight', 'sunlit', 'sun', 'afternoon', 'summer', 'sunshine'],
    time: { id: 'day', color: LIGHT_COLOURS.neutral, azimuth: -50, elevation: 55, window: true, exposure: 1.1 },
    knobs: { softness: -0.35, brightness: 0.15 },
  },
  {
    words: ['night', 'nighttime', 'moonlight', 'moonlit', 'midnight', 'nocturnal'],
    time: { id: 'night', color: LIGHT_COLOURS.night, azimuth: 60, elevation: 30, exposure: 0.7, ambient: 0.7 },
    knobs: { brightness: -0.45, contrast: 0.1, vignette: 0.25 },
  },
  {
    words: ['candle', 'candles', 'candlelight', 'candlelit', 'firelight', 'fireplace'],
    time: { id: 'candle', color: LIGHT_COLOURS.candle, azimuth: -80, elevation: 12, exposure: 0.8, ambient: 0.6 },
    knobs: { brightness: -0.35, warmth: 0.3, vignette: 0.3 },
  },
  { words: ['softbox', 'softboxes', 'lit', 'lighting', 'light', 'lights', 'illuminated', 'glow', 'glowing'], knobs: { brightness: 0.1 } },
  { words: ['soft', 'diffused', 'diffuse', 'gentle', 'softly'], knobs: { softness: 0.35, contrast: -0.08 } },
  { words: ['overcast', 'cloudy', 'grey-sky', 'gray-sky'], weather: 'overcast', knobs: { softness: 0.5, contrast: -0.1, brightness: -0.1 } },
  {
    words: ['rain', 'rainy', 'raining', 'drizzle', 'wet', 'puddles', 'after-rain'],
    weather: 'rain',
    knobs: { softness: 0.4, brightness: -0.15, saturation: -0.1 },
  },
  { words: ['storm', 'stormy', 'thunder'], weather: 'storm', knobs: { softness: 0.45, brightness: -0.3, contrast: 0.1 } },
  { words: ['fog', 'foggy', 'mist', 'misty', 'haze', 'hazy', 'smoky'], weather: 'fog', knobs: { softness: 0.5, contrast: -0.15, saturation: -0.15 } },
  { words: ['clear', 'cloudless', 'crisp'], weather: 'clear', knobs: { contrast: 0.05 } },
  {
    words: ['hard', 'harsh', 'dramatic', 'contrasty', 'spotlight', 'spotlit', 'bold', 'strong', 'shadows', 'shadow', 'chiaroscuro'],
    knobs: { softness: -0.4, contrast: 0.15, vignette: 0.2 },
  },
  { words: ['dark', 'dim', 'moody', 'low-key', 'shadowy', 'gloomy', 'noir', 'mysterious'], knobs: { brightness: -0.55, vignette: 0.25, contrast: 0.08 } },
  { words: ['bright', 'airy', 'high-key', 'luminous', 'radiant', 'white-background'], knobs: { brightness: 0.4, vignette: -0.15 } },
  { words: ['warm', 'golden', 'cozy', 'cosy', 'toasty', 'autumn', 'autumnal', 'fall', 'honey', 'sunkissed', 'sun-kissed'], knobs: { warmth: 0.65 } },
  { words: ['cool', 'cold', 'icy', 'clinical', 'winter', 'wintry', 'frosty', 'chilly'], knobs: { warmth: -0.65 } },
  { words: ['window', 'windowsill', 'windowlight', 'window-light'], window: true },
  { words: ['lamp', 'lamps', 'lamplight', 'lamplit', 'tungsten', 'incandescent'], knobs: { warmth: 0.5, brightness: -0.1 }, window: false },
  {
    words: ['luxury', 'luxurious', 'elegant', 'premium', 'opulent', 'upscale', 'high-end', 'glamorous', 'sophisticated'],
    knobs: { contrast: 0.1, brightness: -0.1 },
    suggests: 'marble',
  },
  {
    words: ['minimal', 'minimalist', 'clean', 'simple', 'scandinavian', 'nordic', 'uncluttered', 'plain'],
    knobs: { softness: 0.2, brightness: 0.2, saturation: -0.15, vignette: -0.1 },
    suggests: 'linen',
  },
  { words: ['rustic', 'farmhouse', 'cabin', 'handmade', 'artisan', 'artisanal', 'boho', 'bohemian'], knobs: { warmth: 0.3 }, suggests: 'wood' },
  {
    words: ['modern', 'loft', 'industrial', 'factory', 'warehouse', 'contemporary', 'sleek', 'edgy'],
    knobs: { warmth: -0.15, contrast: 0.05 },
    suggests: 'industrial',
  },
  { words: ['natural', 'organic', 'earthy', 'earth', 'botanical', 'eco', 'sustainable'], knobs: { warmth: 0.2 }, suggests: 'wood' },
  { words: ['vintage', 'retro', 'nostalgic', 'antique', 'classic'], knobs: { saturation: -0.2, warmth: 0.3 } },
  { words: ['fresh', 'spring', 'springtime', 'cheerful', 'playful', 'happy', 'lively'], knobs: { brightness: 0.2, saturation: 0.1 } },
  { words: ['calm', 'serene', 'peaceful', 'quiet', 'tranquil', 'relaxing', 'zen', 'dreamy', 'romantic'], knobs: { softness: 0.25, contrast: -0.06 } },
  { words: ['vibrant', 'colourful', 'colorful', 'vivid', 'saturated', 'bright-coloured', 'pop', 'neon'], knobs: { saturation: 0.3 } },
  {
    words: ['muted', 'pastel', 'pastels', 'desaturated', 'subdued', 'neutral', 'soft-toned', 'monochrome', 'tonal'],
    knobs: { saturation: -0.3, brightness: 0.1 },
  },
  { words: ['glossy', 'shiny', 'polished', 'reflective', 'reflection', 'reflections', 'mirror', 'mirrored', 'lacquered'], knobs: { contrast: 0.05 } },
];

/** Hue family of each material's own colour, so "no red" can tone down a red brick wall. */
const MATERIAL_HUE: Partial<Record<MaterialId, string[]>> = {
  brick: ['red', 'orange', 'terracotta', 'brown', 'rust'],
  wood: ['brown', 'orange', 'tan', 'yellow'],
  darkwood: ['brown', 'red', 'chocolate'],
  linen: ['beige', 'cream', 'tan', 'sand'],
  metal: ['grey', 'gray', 'blue'],
  concrete: ['grey', 'gray'],
  marble: ['white'],
  quartz: ['white'],
  tile: ['white'],
  plaster: ['white', 'cream'],
  paper: ['white'],
};

/** Places: the scene family a prompt asks for. */
export const PLACE_WORDS: Record<string, FamilyId> = Object.fromEntries(
  (
    [
      [
        'beach',
        [
          'beach',
          'beaches',
          'seaside',
          'ocean',
          'sea',
          'seashore',
          'shore',
          'shoreline',
          'coast',
          'coastal',
          'surf',
          'waves',
          'wave',
          'tropical',
          'island',
          'sand',
          'sandy',
          'palm',
          'palms',
          'palm-trees',
          'riviera',
          'mediterranean',
        ],
      ],
      [
        'garden',
        [
          'garden',
          'gardens',
          'grass',
          'grassy',
          'lawn',
          'meadow',
          'field',
          'fields',
          'park',
          'backyard',
          'yard',
          'greenery',
          'foliage',
          'leafy',
          'plants',
          'plant',
          'bushes',
          'hedge',
          'outdoor',
          'outdoors',
          'outside',
          'nature',
          'picnic',
        ],
      ],
      [
        'forest',
        [
          'forest',
          'forests',
          'woods',
          'woodland',
          'trail',
          'trails',
          'jungle',
          'rainforest',
          'trees',
          'tree',
          'moss',
          'mossy',
          'ferns',
          'fern',
          'hiking',
          'camping',
          'campsite',
        ],
      ],
      ['snow', ['snow', 'snowy', 'snowfall', 'snowflakes', 'ski', 'skiing', 'alpine', 'glacier', 'frozen', 'ice', 'slope', 'slopes', 'mountain', 'mountains']],
      ['pool', ['pool', 'poolside', 'swimming', 'swimming-pool', 'pool-edge', 'resort', 'villa']],
      ['water', ['water', 'lake', 'lakeside', 'river', 'riverside', 'pond', 'puddle', 'ripples', 'ripple', 'splash', 'waterside', 'dock', 'pier']],
      ['rocks', ['rocks', 'rock', 'rocky', 'boulder', 'boulders', 'cliff', 'cliffs', 'crag', 'volcanic', 'basalt', 'stones', 'quarry']],
      ['desert', ['desert', 'dunes', 'dune', 'sahara', 'canyon', 'arid', 'savanna', 'safari', 'oasis', 'badlands', 'mesa']],
      [
        'city',
        [
          'city',
          'street',
          'streets',
          'downtown',
          'urban',
          'sidewalk',
          'pavement',
          'road',
          'alley',
          'alleyway',
          'skyline',
          'town',
          'cityscape',
          'nightlife',
          'rooftop',
          'metropolis',
          'crosswalk',
        ],
      ],
      ['sky', ['sky', 'skies', 'clouds', 'cloud', 'heavens', 'heavenly', 'ledge', 'balcony', 'horizon', 'mountaintop', 'summit']],
      [
        'studio',
        [
          'studio',
          'sweep',
          'seamless',
          'cyclorama',
          'infinity',
          'gradient',
          'backdrop-paper',
          'colour-paper',
          'color-paper',
          'solid',
          'flat-lay',
          'e-commerce',
          'ecommerce',
          'catalog',
          'catalogue',
          'packshot',
        ],
      ],
      [
        'podium',
        [
          'podium',
          'podiums',
          'pedestal',
          'plinth',
          'riser',
          'cylinder',
          'platform',
          'stage',
          'dais',
          'pillar',
          'column',
          'cube',
          'block',
          'display',
          'stand',
          'geometric',
          'shapes',
          'arch',
        ],
      ],
      ['kitchen', ['kitchen', 'cafe', 'bakery', 'breakfast', 'brunch', 'coffee', 'restaurant', 'dining', 'pantry']],
      ['bathroom', ['bathroom', 'bath', 'spa', 'vanity', 'shower', 'sink', 'wellness', 'bathtub', 'skincare', 'salon']],
      [
        'interior',
        [
          'interior',
          'living-room',
          'lounge',
          'home',
          'shelves',
          'shelf',
          'bookshelf',
          'shelving',
          'bedroom',
          'nightstand',
          'office',
          'library',
          'apartment',
          'house',
          'room',
          'indoors',
          'indoor',
          'hotel',
          'sofa',
          'couch',
        ],
      ],
      [
        'drape',
        ['drape', 'drapes', 'draped', 'drapery', 'curtain', 'curtains', 'silk', 'silky', 'satin', 'velvet', 'folds', 'folded', 'chiffon', 'tulle', 'sheer'],
      ],
    ] as const
  ).flatMap(([id, words]) => words.map((w) => [w, id as FamilyId])),
);

/** Families that are a thing under the subject, not a place: they combine with a place word. */
const MODIFIER_FAMILIES = new Set<FamilyId>(['podium', 'drape']);

/** Scattered things on the ground. */
export const PROP_WORDS: Record<string, NonNullable<SceneSpec['props']>['kind']> = {
  petals: 'petals',
  petal: 'petals',
  'rose-petals': 'petals',
  confetti: 'petals',
  blossom: 'flowers',
  blossoms: 'flowers',
  flowers: 'flowers',
  flower: 'flowers',
  floral: 'flowers',
  daisies: 'flowers',
  wildflowers: 'flowers',
  bouquet: 'flowers',
  leaves: 'leaves',
  leaf: 'leaves',
  'fallen-leaves': 'leaves',
  pebbles: 'pebbles',
  pebble: 'pebbles',
  gravel: 'pebbles',
  shells: 'shells',
  seashells: 'shells',
  shell: 'shells',
};

/** Out-of-focus point lights. */
/** Words that ask for more of the scattered props. */
export const SCATTER_WORDS = new Set(['scattered', 'strewn', 'sprinkled', 'covered', 'carpet']);
export const BOKEH_WORDS = new Set([
  'bokeh',
  'neon',
  'fairy-lights',
  'string-lights',
  'city-lights',
  'sparkle',
  'sparkles',
  'sparkling',
  'glitter',
  'twinkle',
  'festive',
  'christmas',
  'holiday',
]);
const GLOSS_WORDS = new Set(['glossy', 'shiny', 'polished', 'reflective', 'reflection', 'reflections', 'mirror', 'mirrored', 'lacquered']);

/**
 * Words that carry no scene content: grammar (articles, prepositions, conjunctions) and the
 * boilerplate of photo prompts ("product photo", "high quality"). They are neither understood
 * nor ignored, and do not count towards the understood share.
 */
export const FILLER = new Set([
  'a',
  'an',
  'the',
  'and',
  'or',
  'of',
  'on',
  'in',
  'at',
  'by',
  'with',
  'near',
  'against',
  'onto',
  'into',
  'over',
  'under',
  'beside',
  'next',
  'to',
  'for',
  'from',
  'its',
  'it',
  'is',
  'are',
  'be',
  'this',
  'that',
  'some',
  'very',
  'lots',
  'lot',
  'few',
  'plenty',
  'while',
  'during',
  'up',
  'out',
  'as',
  'atop',
  'around',
  'among',
  'amid',
  'through',
  'across',
  'along',
  'upon',
  'placed',
  'sitting',
  'standing',
  'resting',
  'lying',
  'set',
  'shot',
  'photo',
  'photograph',
  'photography',
  'image',
  'picture',
  'pic',
  'scene',
  'setting',
  'product',
  'products',
  'item',
  'items',
  'professional',
  'commercial',
  'editorial',
  'advertising',
  'ad',
  'high',
  'quality',
  'hd',
  'hq',
  'k',
  'realistic',
  'photorealistic',
  'detailed',
  'style',
  'styled',
  'look',
  'looking',
  'feel',
  'vibe',
  'vibes',
  'mood',
  'aesthetic',
  'beautiful',
  'nice',
  'pretty',
  'lovely',
  'gorgeous',
  'stunning',
  'perfect',
  'amazing',
  'tones',
  'tone',
  'toned',
  'colours',
  'colors',
  'colour',
  'color',
  'coloured',
  'colored',
  'hues',
  'palette',
  'shades',
  'my',
  'our',
  'your',
  'their',
  'no',
  'not',
  'without',
  'just',
  'only',
  'also',
  'slightly',
  'subtle',
  'hint',
  'touch',
  'bit',
  'little',
  'background',
]);

const WALL_NOUNS_EXTRA = new Set(['backdrop', 'wall', 'walls', 'behind', 'backsplash']);
const PODIUM_NOUNS = new Set([
  'podium',
  'pedestal',
  'plinth',
  'riser',
  'cylinder',
  'platform',
  'block',
  'cube',
  'stand',
  'column',
  'pillar',
  'display',
  'stage',
  'dais',
  'arch',
]);
const PROP_NOUNS = new Set(Object.keys(PROP_WORDS));

export interface ParsedScene {
  spec: SceneSpec;
  /** Vocabulary terms recognised, for meta and debugging prompts. */
  terms: string[];
  /** Content words of the prompt the vocabulary does not know (they changed nothing). */
  ignored: string[];
  /** Number of content words (not filler) in the prompt. */
  contentWords: number;
  /** The scene family chosen (a place, or "tabletop"). */
  family: FamilyId;
  /** Terms of the negative prompt that were applied. */
  negated: string[];
}

const PHRASES: Record<string, string> = {
  'golden hour': 'golden hour',
  'blue hour': 'blue hour',
  'low key': 'low-key',
  'high key': 'high-key',
  'living room': 'living-room',
  'swimming pool': 'swimming-pool',
  'pool edge': 'pool-edge',
  'city lights': 'city-lights',
  'fairy lights': 'fairy-lights',
  'string lights': 'string-lights',
  'colour paper': 'colour-paper',
  'color paper': 'color-paper',
  'palm trees': 'palm-trees',
  'rose petals': 'rose-petals',
  'fallen leaves': 'fallen-leaves',
  'white background': 'white-background',
  'window light': 'window-light',
  'flat lay': 'flat-lay',
  'grey sky': 'grey-sky',
  'gray sky': 'gray-sky',
  'after rain': 'after-rain',
  'high end': 'high-end',
  'sun kissed': 'sun-kissed',
  'e commerce': 'e-commerce',
  'backdrop paper': 'backdrop-paper',
  'early morning': 'morning',
};

function tokenize(text: string): string[] {
  // Commas and full stops end a clause: "blue, linen table" does not make the table blue.
  const words = text
    .toLowerCase()
    .replace(/[,.;:!?]/g, ' | ')
    .replace(/[^a-z|\s-]/g, ' ')
    .split(/\s+/)
    .filter((w) => w && w !== '-');
  // Fuse the two-word phrases the vocabulary knows.
  const out: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const pair = PHRASES[`${words[i]} ${words[i + 1] ?? ''}`];
    if (pair) {
      out.push(pair);
      i++;
      continue;
    }
    out.push(words[i]!);
  }
  return out;
}

const lightingIndex = new Map<string, LightingTerm>();
for (const t of LIGHTING_TERMS) for (const w of t.words) lightingIndex.set(w, t);

type Where = 'wall' | 'floor' | 'podium' | 'props';

/** Where a material or colour word points: the next surface noun within three words decides, then "on"/"against" before it. */
function surfaceOf(tokens: string[], i: number): Where | undefined {
  for (let j = i + 1; j < Math.min(tokens.length, i + 4); j++) {
    const t = tokens[j]!;
    if (t === '|') break;
    if (WALL_NOUNS.has(t) || WALL_NOUNS_EXTRA.has(t)) return 'wall';
    if (FLOOR_NOUNS.has(t)) return 'floor';
    if (PODIUM_NOUNS.has(t)) return 'podium';
    if (PROP_NOUNS.has(t)) return 'props';
    if ((MATERIAL_WORDS[t] || PLACE_WORDS[t]) && j > i) break;
  }
  for (let j = i - 1; j >= Math.max(0, i - 3); j--) {
    const t = tokens[j]!;
    if (t === '|') break;
    if (t === 'against') return 'wall';
    if (t === 'on' || t === 'atop' || t === 'onto') return 'floor';
  }
  return undefined;
}

function mixRgb(a: Rgb, b: Rgb, t: number): Rgb {
  return [a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t, a[2] + (b[2] - a[2]) * t];
}

const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));

/** Outdoor light and sky by time of day. */
const OPEN_TIME: Record<TimeId, { sky: keyof typeof SKIES; light: SceneSpec['light']; ambient: SceneSpec['ambient']; exposure: number }> = {
  day: {
    sky: 'day',
    light: { azimuth: -45, elevation: 55, color: [1.0, 0.96, 0.9], intensity: 1.55, softness: 0.15 },
    ambient: { color: [0.75, 0.85, 1.0], intensity: 0.55 },
    exposure: 1,
  },
  morning: {
    sky: 'morning',
    light: { azimuth: -70, elevation: 20, color: [1.0, 0.86, 0.7], intensity: 1.4, softness: 0.2 },
    ambient: { color: [0.8, 0.85, 1.0], intensity: 0.5 },
    exposure: 1,
  },
  golden: {
    sky: 'golden',
    light: { azimuth: 140, elevation: 8, color: [1.0, 0.6, 0.32], intensity: 1.5, softness: 0.2 },
    ambient: { color: [0.85, 0.7, 0.75], intensity: 0.5 },
    exposure: 1,
  },
  dusk: {
    sky: 'dusk',
    light: { azimuth: 150, elevation: 4, color: [1.0, 0.55, 0.4], intensity: 0.7, softness: 0.5 },
    ambient: { color: [0.55, 0.55, 0.8], intensity: 0.45 },
    exposure: 0.95,
  },
  night: {
    sky: 'night',
    light: { azimuth: 50, elevation: 35, color: [1.0, 0.78, 0.5], intensity: 0.75, softness: 0.4 },
    ambient: { color: [0.35, 0.42, 0.7], intensity: 0.3 },
    exposure: 0.9,
  },
  candle: {
    sky: 'night',
    light: { azimuth: -80, elevation: 12, color: LIGHT_COLOURS.candle, intensity: 0.9, softness: 0.4 },
    ambient: { color: [0.35, 0.35, 0.5], intensity: 0.25 },
    exposure: 0.9,
  },
};

/**
 * Builds a scene from a prompt. `seed` only breaks ties (a prompt naming no place, material or
 * mood picks a preset from the seed), so the same prompt and seed give the same scene.
 */
export function parsePrompt(prompt: string, negative: string | undefined, seed: number): ParsedScene {
  const tokens = tokenize(prompt);
  const negTokens = negative ? negative.split(',').flatMap((part) => tokenize(part)) : [];
  const neg = new Set(negTokens);
  const terms: string[] = [];
  const ignored: string[] = [];
  const negated: string[] = [];
  let contentWords = 0;

  let floor: MaterialId | undefined;
  let wall: MaterialId | undefined;
  let podiumMat: MaterialId | undefined;
  let suggested: string | undefined;
  const floorColours: Rgb[] = [];
  const wallColours: Rgb[] = [];
  const podiumColours: Rgb[] = [];
  const propColours: Rgb[] = [];
  const freeColours: Rgb[] = [];
  const knobs: Knobs = { warmth: 0, brightness: 0, softness: 0, contrast: 0, saturation: 0, vignette: 0 };
  let time: LightingTerm['time'];
  let weather: LightingTerm['weather'];
  let window: boolean | undefined;
  const places: FamilyId[] = [];
  let props: NonNullable<SceneSpec['props']>['kind'] | undefined;
  let bokeh = false;
  let noBokeh = false;
  let gloss = false;
  let palms = false;
  let scatterMore = false;
  let pendingColour: Rgb | undefined;

  const apply = (t: LightingTerm, sign: number) => {
    for (const [k, v] of Object.entries(t.knobs ?? {})) knobs[k as keyof Knobs] += sign * (v as number);
    if (sign > 0) {
      if (t.time) time = t.time;
      if (t.weather) weather = t.weather;
      if (t.window !== undefined) window = t.window;
      if (t.suggests && !suggested) suggested = t.suggests;
    } else if (t.window || t.time?.window) {
      window = false;
    }
  };

  for (let i = 0; i < tokens.length; i++) {
    const w = tokens[i]!;
    if (w === '|' || FILLER.has(w)) continue;
    contentWords++;
    if (neg.has(w)) {
      terms.push(`${w}->negated`);
      continue;
    }
    if (w === 'tropical' && (neg.has('palm-trees') || neg.has('palms') || neg.has('palm'))) {
      places.push('beach');
      terms.push(`${w}->beach`);
      continue;
    }
    let known = false;
    const mat = MATERIAL_WORDS[w];
    const next = tokens[i + 1];
    // A material right before a place names the place ("pine forest", "stone beach"), not a surface.
    if (mat && !(next && PLACE_WORDS[next] && !MODIFIER_FAMILIES.has(PLACE_WORDS[next]!) && !FLOOR_NOUNS.has(next))) {
      const bound = surfaceOf(tokens, i);
      const where =
        bound === 'podium'
          ? 'podium'
          : WALL_ONLY.has(mat)
            ? 'wall'
            : FLOOR_ONLY.has(mat)
              ? 'floor'
              : bound === 'wall' || bound === 'floor'
                ? bound
                : floor
                  ? 'wall'
                  : 'floor';
      if (where === 'podium') podiumMat ??= mat;
      else if (where === 'wall') wall ??= mat;
      else floor ??= mat;
      if (pendingColour) (where === 'podium' ? podiumColours : where === 'wall' ? wallColours : floorColours).push(pendingColour);
      pendingColour = undefined;
      terms.push(`${w}->${where}:${mat}`);
      known = true;
    } else if (mat) {
      terms.push(`${w}->place`);
      known = true;
    }
    const col = COLOUR_WORDS[w];
    if (!known && col && w !== 'golden' && !PLACE_WORDS[w]) {
      // "black marble", "white tiles": the colour of the material that follows, wherever it goes.
      if (next && MATERIAL_WORDS[next] && !neg.has(next)) {
        pendingColour = col;
        terms.push(`${w}->${next}`);
        continue;
      }
      const where = surfaceOf(tokens, i);
      (where === 'wall'
        ? wallColours
        : where === 'floor'
          ? floorColours
          : where === 'podium'
            ? podiumColours
            : where === 'props'
              ? propColours
              : freeColours
      ).push(col);
      terms.push(`${w}->${where ?? 'colour'}`);
      known = true;
    }
    const place = PLACE_WORDS[w];
    if (place) {
      places.push(place);
      if (w === 'palm' || w === 'palms' || w === 'palm-trees' || w === 'tropical') palms = true;
      if (!known) terms.push(`${w}->${place}`);
      known = true;
    }
    const prop = PROP_WORDS[w];
    if (prop) {
      props ??= prop;
      terms.push(`${w}->scatter:${prop}`);
      known = true;
    }
    if (BOKEH_WORDS.has(w)) {
      bokeh = true;
      terms.push(`${w}->bokeh`);
      known = true;
    }
    if (SCATTER_WORDS.has(w)) {
      scatterMore = true;
      terms.push(`${w}->scatter`);
      known = true;
    }
    if (GLOSS_WORDS.has(w)) gloss = true;
    const lt = lightingIndex.get(w);
    if (lt && !(known && (col || mat))) {
      apply(lt, 1);
      terms.push(w);
      known = true;
    }
    if (!known && (WALL_NOUNS.has(w) || FLOOR_NOUNS.has(w) || WALL_NOUNS_EXTRA.has(w) || w === 'edge' || w === 'surface')) {
      // Surface nouns: they say where the colours and materials around them go.
      terms.push(`${w}->surface`);
      known = true;
    }
    if (!known) ignored.push(w);
  }

  // Negative prompt: attributes are countered, not just dropped.
  const excluded = new Set<MaterialId>();
  const avoidColours = new Set<string>();
  const avoidPlaces = new Set<FamilyId>();
  for (const w of new Set(negTokens)) {
    if (w === '|' || FILLER.has(w)) continue;
    const mat = MATERIAL_WORDS[w];
    if (mat) {
      excluded.add(mat);
      negated.push(w);
      continue;
    }
    if (COLOUR_WORDS[w]) {
      avoidColours.add(w);
      negated.push(w);
      continue;
    }
    // Palms are a detail of the beach: "no palm trees" drops them, not the beach.
    if (w === 'palm' || w === 'palms' || w === 'palm-trees') {
      palms = false;
      negated.push(w);
      continue;
    }
    if (PLACE_WORDS[w]) {
      avoidPlaces.add(PLACE_WORDS[w]!);
      negated.push(w);
      continue;
    }
    if (PROP_WORDS[w]) {
      props = undefined;
      negated.push(w);
      continue;
    }
    if (BOKEH_WORDS.has(w)) {
      bokeh = false;
      noBokeh = true;
      negated.push(w);
      continue;
    }
    if (GLOSS_WORDS.has(w)) {
      gloss = false;
      negated.push(w);
      continue;
    }
    // Scenes never contain people, text or logos: asking for none of them is already met.
    if (NOTHING_TO_REMOVE.has(w)) {
      negated.push(w);
      continue;
    }
    const lt = lightingIndex.get(w);
    if (lt) {
      apply(lt, -0.7);
      negated.push(w);
    }
  }
  if (floor && excluded.has(floor)) floor = undefined;
  if (wall && excluded.has(wall)) wall = undefined;

  // The family: the first place named, unless it is only a thing to stand on (podium, drape),
  // which then goes into the place (a podium on the beach) or, alone, into the studio.
  const placeList = places.filter((p) => !avoidPlaces.has(p));
  // "Sky" is the weakest place: "stormy sky over the rocky coast" is a coast.
  let mainPlace = placeList.find((p) => !MODIFIER_FAMILIES.has(p) && p !== 'sky') ?? placeList.find((p) => p === 'sky');
  // "at the lake shore", "pebbles by the river": standing on the shore, the water behind.
  if (mainPlace === 'water' && placeList.includes('beach')) mainPlace = 'beach';
  const wantsPodium = placeList.includes('podium');
  const wantsDrape = placeList.includes('drape');
  let family: FamilyId;
  let spec: SceneSpec;
  if (mainPlace) {
    family = mainPlace;
    spec = familySpec(mainPlace);
  } else if (wantsPodium && !wantsDrape) {
    family = 'podium';
    spec = familySpec('podium');
  } else if (wantsDrape) {
    family = 'drape';
    spec = familySpec('drape');
  } else {
    // Tabletop: the table's material decides, then the wall's, then mood words, then the seed.
    family = 'tabletop';
    const presetNames = Object.keys(PRESETS);
    const allowed = (name: string) => !excluded.has(PRESETS[name]!.floor) && !excluded.has(PRESETS[name]!.wall);
    let presetName =
      (floor && MATERIAL_PRESET[floor]) ||
      (wall && MATERIAL_PRESET[wall]) ||
      suggested ||
      presetNames[Math.floor(seededRandom(seed ^ 0xabc)() * presetNames.length)]!;
    if (!allowed(presetName)) {
      const r = seededRandom(seed ^ 0xdef);
      const candidates = presetNames.filter(allowed);
      presetName = candidates.length ? candidates[Math.floor(r() * candidates.length)]! : presetName;
    }
    spec = cloneSpec(PRESETS[presetName]!);
  }
  spec.name = 'prompt';
  const open = spec.setting === 'open';
  if ((mainPlace || wantsDrape) && wantsPodium) spec.podium = { shape: 'cylinder', material: 'plaster' };
  // A mood's material for the table of an indoor place ("rustic cafe": a wooden table).
  if (mainPlace && spec.setting === 'room' && suggested && !floor && PRESETS[suggested]) spec.floor = PRESETS[suggested]!.floor;
  if (mainPlace && wantsDrape && !open) {
    spec.wall = 'drape';
    spec.floor = 'silk';
  }
  if (spec.podium && podiumMat) spec.podium.material = podiumMat;
  if (spec.podium && placeList.includes('podium') && tokens.some((t) => t === 'block' || t === 'cube')) spec.podium.shape = 'block';
  if (floor) spec.floor = floor;
  if (wall && !open) spec.wall = wall;
  if (spec.setting === 'sweep' && (floor || wall)) {
    spec.setting = 'room';
  }
  if (excluded.has(spec.floor)) spec.floor = excluded.has('paper') ? 'plaster' : 'paper';
  if (excluded.has(spec.wall)) spec.wall = excluded.has('plaster') ? 'paper' : 'plaster';
  if ((floor || wall) && !open) delete spec.wallTint;
  if (palms && spec.skyline === 'none') spec.skyline = 'palms';
  // "rocks by the sea", "meadow by the lake": a second, watery place becomes the far ground.
  if (open && !spec.far && mainPlace !== 'water' && placeList.some((p) => p === 'beach' || p === 'water'))
    spec.far = { material: 'sea', from: 260, shore: spec.floor === 'sand' };
  if (props) spec.props = { kind: props, density: (props === 'leaves' ? 0.5 : 0.42) * (scatterMore ? 1.5 : 1) };
  if (gloss) spec.reflect = Math.max(spec.reflect, 0.3);

  const neon = tokens.includes('neon') && !neg.has('neon');
  if (!time && neon && open) time = LIGHTING_TERMS[1]!.time;
  if (time) {
    if (open) {
      const t = OPEN_TIME[time.id];
      const cloudsWas = spec.sky?.clouds ?? 0.3;
      spec.sky = { ...structuredClone(SKIES[t.sky]), clouds: Math.min(cloudsWas, SKIES[t.sky].clouds + 0.2) };
      spec.light = { ...t.light, azimuth: t.light.azimuth };
      spec.ambient = { ...t.ambient };
      spec.exposure *= t.exposure;
      // Night light is the street's sodium and LED lamps in a city, the moon anywhere else.
      if (time.id === 'night' && spec.skyline !== 'city') spec.light = { ...spec.light, color: LIGHT_COLOURS.night, intensity: 0.6 };
      if (time.id === 'night' || time.id === 'dusk') {
        // After dark the street lights come on and the ground mirrors them.
        if (spec.skyline === 'city' && !noBokeh) bokeh = true;
      }
    } else {
      spec.light.color = time.color;
      spec.light.azimuth = time.azimuth;
      spec.light.elevation = time.elevation;
      spec.exposure *= time.exposure ?? 1;
      spec.ambient.intensity *= time.ambient ?? 1;
      if (time.ambient) spec.ambient.color = mixRgb(spec.ambient.color, time.color, 0.35);
      if (time.window) spec.window = true;
    }
  }
  if (weather && weather !== 'clear') {
    if (open && spec.sky) {
      const base = weather === 'storm' ? SKIES.storm : SKIES.overcast;
      const dark = time?.id === 'night' || time?.id === 'dusk';
      // After dark under cloud the glow of the sunset is gone: a low, grey-blue deck.
      spec.sky = dark
        ? {
            ...spec.sky,
            clouds: 0.85,
            glowAmount: 0,
            horizon: mixRgb(spec.sky.horizon, [0.3, 0.31, 0.36], 0.7),
            cloudColour: mixRgb(spec.sky.zenith, [0.3, 0.3, 0.35], 0.3),
          }
        : structuredClone(base);
      spec.light.intensity *= weather === 'storm' ? 0.45 : 0.6;
      spec.ambient.intensity *= 1.3;
      spec.ambient.color = [0.9, 0.92, 0.96];
    }
    if (weather === 'rain') {
      spec.wet = true;
      spec.reflect = Math.max(spec.reflect, 0.35);
    }
    if (weather === 'fog') spec.haze = Math.max(spec.haze, 0.6);
  } else if (weather === 'clear' && spec.sky) spec.sky.clouds = 0.05;
  if (window !== undefined) spec.window = window;

  // Sunlight through leaves: a few warm out-of-focus discs in the tree line, when the sun is out.
  if (
    !bokeh &&
    !noBokeh &&
    (spec.skyline === 'forest' || spec.skyline === 'trees') &&
    time &&
    ['day', 'golden', 'morning'].includes(time.id) &&
    (!weather || weather === 'clear')
  ) {
    spec.bokeh = {
      count: 14,
      colours: [
        [1, 0.93, 0.75],
        [1, 0.85, 0.6],
      ],
      size: 16,
      strength: 0.3,
    };
  }
  if (bokeh) {
    const nightish = (!!spec.sky && spec.sky.zenith[2] < 0.4) || time?.id === 'night' || time?.id === 'candle';
    spec.bokeh =
      spec.skyline === 'city' || nightish
        ? {
            count: 55,
            colours: [
              [1, 0.8, 0.45],
              [1, 0.92, 0.75],
              [0.95, 0.35, 0.3],
              [0.5, 0.7, 1],
            ],
            size: 20,
            strength: 0.85,
          }
        : {
            count: 30,
            colours: [
              [1, 0.95, 0.85],
              [1, 0.85, 0.65],
            ],
            size: 24,
            strength: 0.45,
          };
    if (neon)
      spec.bokeh.colours = [
        [1, 0.3, 0.75],
        [0.3, 0.9, 1],
        [0.7, 0.4, 1],
        [1, 0.8, 0.5],
      ];
  }
  if (spec.skyline === 'city' && spec.bokeh && time?.id === 'night') spec.wet = spec.wet || weather === 'rain';

  // Colours: a colour tied to a surface tints it strongly; a free colour tints the whole set,
  // the wall more (it is most of the frame behind the subject). Outdoors a free colour goes to
  // the things in the scene (podium, props) and only faintly to the light.
  const avg = (cs: Rgb[]): Rgb | undefined =>
    cs.length ? (cs.reduce((a, c) => [a[0] + c[0], a[1] + c[1], a[2] + c[2]], [0, 0, 0] as Rgb).map((v) => v / cs.length) as Rgb) : undefined;
  const fc = avg(floorColours),
    wc = avg(wallColours),
    pc = avg(podiumColours),
    free = avg(freeColours);
  const propc = avg(propColours);
  if (spec.props && propc) spec.props.colour = propc;
  if (spec.podium && (pc || free)) spec.podium.tint = { rgb: (pc ?? free)!, amount: 0.8 };
  if (open) {
    if (fc) spec.floorTint = { rgb: fc, amount: 0.6 };
    if (free && !spec.podium) spec.light.color = mixRgb(spec.light.color, free, 0.15);
  } else {
    if (fc) spec.floorTint = { rgb: fc, amount: 0.75 };
    else if (free) spec.floorTint = { rgb: free, amount: spec.setting === 'sweep' ? 0.8 : 0.45 };
    if (wc) spec.wallTint = { rgb: wc, amount: 0.8 };
    else if (free) spec.wallTint = { rgb: free, amount: spec.setting === 'sweep' ? 0.8 : 0.7 };
    // A sweep is one sheet of paper: a colour named for either part colours both.
    if (spec.setting === 'sweep' && (fc || wc)) {
      const one = { rgb: (wc ?? fc)!, amount: 0.8 };
      spec.floorTint = { ...one };
      spec.wallTint = { ...one };
    }
  }

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
  spec.exposure *= 2 ** (clamp(knobs.brightness, -1, 1) * 1.3);
  spec.light.softness = clamp(spec.light.softness + knobs.softness, 0.05, 1);
  spec.contrast = clamp(spec.contrast * (1 + knobs.contrast), 0.7, 1.4);
  spec.saturation = clamp(spec.saturation * (1 + knobs.saturation), 0.3, 1.6);
  spec.vignette = clamp(spec.vignette + knobs.vignette, 0, 0.8);

  return { spec, terms, ignored, contentWords, family, negated };
}

/** Negative-prompt words for things the renderer never draws. */
const NOTHING_TO_REMOVE = new Set([
  'people',
  'person',
  'persons',
  'human',
  'humans',
  'hands',
  'hand',
  'text',
  'logo',
  'logos',
  'watermark',
  'watermarks',
  'letters',
  'words',
  'clutter',
  'blurry',
  'blur',
  'noise',
  'grain',
  'lowres',
  'distorted',
  'ugly',
  'deformed',
  'props',
  'objects',
  'animals',
  'cars',
  'signature',
  'frame',
  'border',
  'cartoon',
  'illustration',
  'drawing',
  'cgi',
]);

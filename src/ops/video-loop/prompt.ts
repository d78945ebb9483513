/**
 * The prompt vocabulary: motion words scale amplitudes and periods of the loop's periodic
 * motions; directions the tool must not follow (camera moves, cuts, new objects, scene changes)
 * are collected so the pipeline can name them in one warning. Matching is by whole word.
 */

export interface MotionParams {
  /** Subject sway (side-to-side bend growing with height), fraction of subject height. */
  sway: number;
  /** Subject breathing (vertical stretch about the base), fraction of subject height. */
  breathing: number;
  /** Foliage flutter, fraction of the frame's short side. */
  foliage: number;
  /** Sky drift, fraction of the frame width. */
  sky: number;
  /** Water ripple, fraction of the frame's short side. */
  water: number;
  /** Brightness shimmer on highlights, relative gain. */
  shimmer: number;
  /** Multiplies every motion period (seconds); > 1 is slower. */
  periodScale: number;
}

export const DEFAULT_MOTION: Readonly<MotionParams> = {
  sway: 0.01,
  breathing: 0.008,
  foliage: 0.0035,
  sky: 0.006,
  water: 0.0025,
  shimmer: 0.05,
  periodScale: 1,
};

type Adjust = Partial<Record<keyof MotionParams, number>>;

/** Word -> multipliers. Documented in docs/ops/video-loop.md; keep the two in step. */
const VOCABULARY: ReadonlyArray<{ words: readonly string[]; adjust: Adjust }> = [
  { words: ['wind', 'windy', 'breeze', 'breezy', 'gust', 'gusty', 'blowing', 'blown'], adjust: { foliage: 2, sway: 1.6, sky: 1.5 } },
  { words: ['breathing', 'breathe', 'breathes', 'breath', 'alive', 'living'], adjust: { breathing: 2 } },
  { words: ['sway', 'swaying', 'sways', 'rock', 'rocking', 'bob', 'bobbing'], adjust: { sway: 2 } },
  {
    words: ['water', 'waves', 'wave', 'ripple', 'ripples', 'rippling', 'ocean', 'sea', 'lake', 'river', 'pond', 'flowing'],
    adjust: { water: 2, shimmer: 1.5 },
  },
  { words: ['clouds', 'cloud', 'cloudy', 'sky', 'drifting', 'drift'], adjust: { sky: 2 } },
  { words: ['leaves', 'leaf', 'foliage', 'trees', 'tree', 'grass', 'plants', 'rustling', 'rustle'], adjust: { foliage: 1.8 } },
  {
    words: ['shimmer', 'shimmering', 'sparkle', 'sparkling', 'glitter', 'glittering', 'twinkle', 'twinkling', 'glow', 'glowing', 'light'],
    adjust: { shimmer: 2 },
  },
  {
    words: ['gentle', 'gently', 'subtle', 'soft', 'softly', 'calm', 'quiet', 'peaceful', 'still', 'slight', 'slightly'],
    adjust: { sway: 0.6, breathing: 0.6, foliage: 0.6, sky: 0.6, water: 0.6, shimmer: 0.6 },
  },
  {
    words: ['strong', 'stronger', 'lively', 'dramatic', 'energetic', 'intense', 'stormy', 'storm', 'wild'],
    adjust: { sway: 1.7, breathing: 1.5, foliage: 1.8, sky: 1.5, water: 1.8, shimmer: 1.5 },
  },
  { words: ['slow', 'slowly', 'lazy', 'relaxed', 'dreamy'], adjust: { periodScale: 1.6 } },
  { words: ['fast', 'quick', 'quickly', 'rapid', 'rapidly', 'brisk'], adjust: { periodScale: 0.55 } },
];

/** Phrases asking for things a fixed-camera loop of the same scene cannot do. */
const IGNORED: ReadonlyArray<{ kind: string; pattern: RegExp }> = [
  {
    kind: 'camera movement',
    pattern:
      /\b(?:camera\s+\w+|pan(?:s|ning)?|zoom(?:s|ing)?(?:\s+(?:in|out))?|tilt(?:s|ing)?|dolly(?:ing)?|truck(?:ing)?|crane|orbit(?:s|ing)?|tracking\s+shot|push(?:es)?\s+in|pull(?:s)?\s+(?:back|out)|fly(?:ing)?\s+(?:through|over|in)|handheld|shak(?:e|y)\s+cam(?:era)?)\b/gi,
  },
  { kind: 'cut or transition', pattern: /\b(?:cuts?\s+to|cut|transitions?|fade(?:s)?\s+(?:in|out|to)|dissolves?|montage|jump\s+cut|scene\s+cut)\b/gi },
  {
    kind: 'new object',
    pattern:
      /\b(?:add(?:s|ing)?|introduc(?:e|es|ing)|insert(?:s|ing)?|spawn(?:s|ing)?|bring(?:s|ing)?\s+in)\s+(?:a|an|another|some|two|three|several)\s+\w+|\b\w+\s+(?:appears?|appearing|enters?|entering|walks?\s+in(?:to)?|flies\s+in(?:to)?)\b/gi,
  },
  {
    kind: 'scene change',
    pattern:
      /\b(?:change(?:s)?\s+(?:the\s+)?(?:scene|background|setting|season|weather)|turn(?:s)?\s+(?:in)?to\s+(?:night|day)|(?:day|night)\s+to\s+(?:night|day)|morph(?:s|ing)?(?:\s+into)?|transform(?:s|ing)?(?:\s+into)?|becomes?\s+(?:night|day|winter|summer)|sunset\s+to|new\s+(?:scene|location|background))\b/gi,
  },
];

export interface PromptReading {
  params: MotionParams;
  /** Motion words that took effect, in order of appearance. */
  applied: string[];
  /** Ignored directions as "kind: phrase". */
  ignored: string[];
}

export function readPrompt(prompt: string | undefined): PromptReading {
  const params: MotionParams = { ...DEFAULT_MOTION };
  const applied: string[] = [];
  const ignored: string[] = [];
  if (!prompt?.trim()) return { params, applied, ignored };

  let rest = prompt;
  for (const { kind, pattern } of IGNORED) {
    rest = rest.replace(pattern, (m) => {
      ignored.push(`${kind}: "${m.trim()}"`);
      // Blank the phrase so "zoom slowly" does not also slow the loop down.
      return ' '.repeat(m.length);
    });
  }
  const seen = new Set<string>();
  for (const word of rest.toLowerCase().match(/[a-z]+/g) ?? []) {
    const entry = VOCABULARY.find((v) => v.words.includes(word));
    if (!entry || seen.has(word)) continue;
    seen.add(word);
    applied.push(word);
    for (const [k, f] of Object.entries(entry.adjust) as [keyof MotionParams, number][]) params[k] *= f;
  }
  // Bounds keep any combination of words subtle enough to stay artefact-free.
  params.periodScale = Math.min(2.5, Math.max(0.35, params.periodScale));
  for (const k of ['sway', 'breathing', 'foliage', 'sky', 'water', 'shimmer'] as const) {
    params[k] = Math.min(DEFAULT_MOTION[k] * 4, params[k]);
  }
  return { params, applied, ignored };
}

/** Whole cycles of a motion of natural period `periodSec` in a loop of `durationSec`: >= 1. */
export function cyclesFor(durationSec: number, periodSec: number): number {
  return Math.max(1, Math.round(durationSec / periodSec));
}

import type { MaterialId } from './materials.js';

/**
 * A scene is a handful of physical parameters: what the table and the wall are made of, their
 * tints, one key light (direction, colour, size) plus ambient fill, and camera/grade settings.
 * The six presets are fixed points in that space; the prompt parser moves around it.
 */

export type Rgb = [number, number, number];

export interface Tint {
  /** sRGB 0..1 target colour; the material keeps its luminance pattern and takes this hue. */
  rgb: Rgb;
  amount: number;
}

export interface KeyLight {
  /** Degrees around the subject: 0 = from the camera, -90 = from the left, 90 = right, 180 = behind. */
  azimuth: number;
  /** Degrees above the table. Low sun (sunset) is ~10, studio softboxes ~40. */
  elevation: number;
  /** Linear RGB colour multiplier (temperature). */
  color: Rgb;
  intensity: number;
  /** 0 = point light, hard shadows; 1 = huge softbox, faint diffuse shadows. */
  softness: number;
}

/** Where the camera stands: a table against a wall, open ground to a horizon, or a seamless paper sweep. */
export type Setting = 'room' | 'open' | 'sweep';

/** Sky above the horizon in open scenes (sRGB 0..1 colours; emissive, not lit). */
export interface Sky {
  zenith: Rgb;
  horizon: Rgb;
  /** Glow around the sun's position (sunset, dawn). */
  glow: Rgb;
  glowAmount: number;
  /** 0 = clear, 1 = overcast deck. */
  clouds: number;
  cloudColour: Rgb;
}

/** What stands on the horizon, far out of focus. */
export type Skyline = 'none' | 'trees' | 'forest' | 'hedge' | 'dunes' | 'city' | 'rocks' | 'hills' | 'snowhills' | 'pines' | 'palms';

export interface SceneSpec {
  name: string;
  setting: Setting;
  /** Open scenes: the ground material beyond `from` cm (the sea behind the sand, the pool behind its edge). */
  far?: { material: MaterialId; from: number; tint?: Tint; shore?: boolean };
  sky?: Sky;
  skyline: Skyline;
  skylineTint?: Tint;
  /** Aerial haze / fog, 0..1: far ground and skyline fade towards the horizon colour. */
  haze: number;
  /** Ground reflectivity for the subject's mirror image (water, marble, glass, wet street). */
  reflect: number;
  /** Rain-wet ground: darker and glossy. */
  wet: boolean;
  /** Bright out-of-focus discs over the backdrop (city lights at night, sun through leaves). */
  bokeh?: { count: number; colours: Rgb[]; size: number; strength: number };
  /** Things scattered on the ground around the subject. */
  props?: { kind: 'petals' | 'leaves' | 'flowers' | 'pebbles' | 'shells'; density: number; colour?: Rgb };
  /** Backdrop darkening towards the top of the frame, 0..1 (a graded studio backdrop). */
  gradient?: number;
  /** A shape the subject stands on. */
  podium?: { shape: 'cylinder' | 'block'; material: MaterialId; tint?: Tint };
  floor: MaterialId;
  wall: MaterialId;
  floorTint?: Tint;
  wallTint?: Tint;
  light: KeyLight;
  ambient: { color: Rgb; intensity: number };
  /** Overall exposure multiplier before tone mapping. */
  exposure: number;
  saturation: number;
  contrast: number;
  vignette: number;
  /** Sunlight through window panes falling on the wall. */
  window: boolean;
  /** Depth-of-field blur (Gaussian sigma, px) of something infinitely far from the focus plane. */
  blur: number;
  /** Preferred height of the table/wall line as a fraction of the canvas. */
  junction: number;
}

export const LIGHT_COLOURS = {
  neutral: [1.0, 0.97, 0.93] as Rgb,
  warm: [1.0, 0.82, 0.62] as Rgb,
  sunset: [1.0, 0.58, 0.3] as Rgb,
  morning: [1.0, 0.9, 0.78] as Rgb,
  cool: [0.8, 0.9, 1.0] as Rgb,
  night: [0.62, 0.74, 1.0] as Rgb,
  candle: [1.0, 0.66, 0.38] as Rgb,
};

const base = (name: string, floor: MaterialId, wall: MaterialId, over: Partial<SceneSpec> = {}): SceneSpec => ({
  name,
  setting: 'room',
  floor,
  wall,
  skyline: 'none',
  haze: 0,
  reflect: 0,
  wet: false,
  light: { azimuth: -40, elevation: 42, color: LIGHT_COLOURS.neutral, intensity: 1.1, softness: 0.55 },
  ambient: { color: [0.93, 0.95, 1.0], intensity: 0.42 },
  exposure: 1.0,
  saturation: 1.0,
  contrast: 1.0,
  vignette: 0.25,
  window: false,
  blur: 11,
  junction: 0.5,
  ...over,
});

export const PRESETS: Record<string, SceneSpec> = {
  marble: base('marble', 'marble', 'plaster', {
    light: { azimuth: -35, elevation: 45, color: LIGHT_COLOURS.neutral, intensity: 1.15, softness: 0.7 },
    junction: 0.48,
  }),
  wood: base('wood', 'wood', 'plaster', {
    light: { azimuth: -60, elevation: 30, color: LIGHT_COLOURS.warm, intensity: 1.25, softness: 0.4 },
    wallTint: { rgb: [0.86, 0.78, 0.66], amount: 0.5 },
    window: true,
  }),
  industrial: base('industrial', 'concrete', 'metal', {
    light: { azimuth: 45, elevation: 38, color: LIGHT_COLOURS.cool, intensity: 1.3, softness: 0.25 },
    ambient: { color: [0.85, 0.92, 1.0], intensity: 0.3 },
    contrast: 1.12,
    vignette: 0.4,
    saturation: 0.85,
  }),
  linen: base('linen', 'linen', 'plaster', {
    light: { azimuth: -20, elevation: 55, color: LIGHT_COLOURS.morning, intensity: 1.0, softness: 0.9 },
    ambient: { color: [1.0, 0.96, 0.9], intensity: 0.55 },
    // Oatmeal linen against a warm sand wall: the airy preset, told apart from marble's cool grey-white.
    floorTint: { rgb: [0.84, 0.76, 0.64], amount: 0.45 },
    wallTint: { rgb: [0.9, 0.8, 0.66], amount: 0.55 },
    contrast: 0.92,
    vignette: 0.15,
    junction: 0.42,
  }),
  brick: base('brick', 'darkwood', 'brick', {
    light: { azimuth: -70, elevation: 28, color: LIGHT_COLOURS.warm, intensity: 1.35, softness: 0.35 },
    ambient: { color: [1.0, 0.92, 0.85], intensity: 0.32 },
    vignette: 0.35,
    junction: 0.55,
  }),
  counter: base('counter', 'quartz', 'tile', {
    light: { azimuth: 30, elevation: 50, color: LIGHT_COLOURS.neutral, intensity: 1.15, softness: 0.6 },
    ambient: { color: [0.95, 0.97, 1.0], intensity: 0.5 },
    // Sage-glazed subway tile: a kitchen, and not a second white marble scene.
    wallTint: { rgb: [0.62, 0.74, 0.68], amount: 0.6 },
    window: true,
    junction: 0.5,
  }),
};

export function cloneSpec(s: SceneSpec): SceneSpec {
  return structuredClone(s);
}

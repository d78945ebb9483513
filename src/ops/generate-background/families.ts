import { cloneSpec, LIGHT_COLOURS, PRESETS, type KeyLight, type Rgb, type SceneSpec } from './scenes.js';
import { SKIES } from './sky.js';

/**
 * Scene families beyond the tabletop, each set up the way a product photographer would shoot
 * it: the camera low, the subject sharp on the ground in front, the backdrop (sea, trees,
 * dunes, street) far behind and soft, one consistent light. Prompts pick a family by the
 * place they name; time of day, weather, colours and materials then move it around.
 */

export const FAMILY_IDS = [
  'tabletop',
  'beach',
  'garden',
  'forest',
  'snow',
  'pool',
  'water',
  'rocks',
  'desert',
  'city',
  'sky',
  'studio',
  'podium',
  'kitchen',
  'bathroom',
  'interior',
  'drape',
] as const;
export type FamilyId = (typeof FAMILY_IDS)[number];

const SUN: KeyLight = { azimuth: -45, elevation: 50, color: [1.0, 0.96, 0.9], intensity: 1.55, softness: 0.15 };
const SKY_FILL = { color: [0.75, 0.85, 1.0] as Rgb, intensity: 0.55 };

function outdoor(name: string, over: Partial<SceneSpec>): SceneSpec {
  return {
    ...cloneSpec(PRESETS.marble!),
    name,
    setting: 'open',
    sky: structuredClone(SKIES.day),
    light: { ...SUN },
    ambient: { ...SKY_FILL },
    window: false,
    vignette: 0.12,
    blur: 10,
    junction: 0.42,
    haze: 0.1,
    ...over,
  };
}

function indoor(name: string, floor: SceneSpec['floor'], wall: SceneSpec['wall'], over: Partial<SceneSpec>): SceneSpec {
  return { ...cloneSpec(PRESETS.marble!), name, floor, wall, ...over };
}

/** The family's base scene, before the prompt's other words move it. */
export function familySpec(id: FamilyId): SceneSpec {
  switch (id) {
    case 'tabletop':
      return cloneSpec(PRESETS.marble!);
    case 'beach':
      return outdoor('beach', { floor: 'sand', far: { material: 'sea', from: 240, shore: true }, junction: 0.36 });
    case 'garden':
      return outdoor('garden', {
        floor: 'grass',
        skyline: 'trees',
        junction: 0.5,
        haze: 0.12,
        ambient: { color: [0.8, 0.92, 0.9], intensity: 0.5 },
      });
    case 'forest':
      return outdoor('forest', {
        floor: 'forestfloor',
        skyline: 'forest',
        junction: 0.55,
        haze: 0.12,
        light: { ...SUN, azimuth: 130, elevation: 35, color: [1.0, 0.9, 0.72], intensity: 1.15, softness: 0.35 },
        ambient: { color: [0.7, 0.85, 0.7], intensity: 0.45 },
        exposure: 1.05,
      });
    case 'snow':
      return outdoor('snow', {
        floor: 'snow',
        skyline: 'pines',
        sky: { ...structuredClone(SKIES.day), horizon: [0.84, 0.89, 0.95], clouds: 0.2 },
        light: { ...SUN, azimuth: -55, elevation: 28, color: [0.96, 0.97, 1.0], intensity: 1.35, softness: 0.25 },
        ambient: { color: [0.78, 0.86, 1.0], intensity: 0.6 },
        haze: 0.25,
        junction: 0.45,
        exposure: 0.95,
      });
    case 'pool':
      return outdoor('pool', {
        floor: 'travertine',
        far: { material: 'pool', from: -22 },
        skyline: 'hedge',
        junction: 0.4,
        light: { ...SUN, azimuth: -35, elevation: 60 },
      });
    case 'water':
      return outdoor('water', {
        floor: 'sea',
        skyline: 'hills',
        reflect: 0.55,
        junction: 0.45,
        haze: 0.2,
        floorTint: { rgb: [0.35, 0.55, 0.62], amount: 0.5 },
      });
    case 'rocks':
      return outdoor('rocks', { floor: 'rock', skyline: 'rocks', junction: 0.4, haze: 0.15, light: { ...SUN, azimuth: -60, elevation: 38 } });
    case 'desert':
      return outdoor('desert', {
        floor: 'dune',
        skyline: 'dunes',
        junction: 0.42,
        haze: 0.18,
        sky: { ...structuredClone(SKIES.day), horizon: [0.93, 0.86, 0.74], zenith: [0.3, 0.52, 0.8], clouds: 0.05 },
        light: { ...SUN, azimuth: -50, elevation: 55, color: [1.0, 0.92, 0.8], intensity: 1.7, softness: 0.1 },
        ambient: { color: [0.85, 0.85, 0.95], intensity: 0.45 },
      });
    case 'city':
      return outdoor('city', {
        floor: 'asphalt',
        skyline: 'city',
        junction: 0.55,
        haze: 0.25,
        blur: 12,
        light: { ...SUN, azimuth: 40, elevation: 40, intensity: 1.3, softness: 0.35 },
      });
    case 'sky':
      return outdoor('sky', {
        floor: 'concrete',
        skyline: 'none',
        junction: 0.82,
        haze: 0,
        sky: { ...structuredClone(SKIES.day), clouds: 0.55 },
      });
    case 'studio':
      return indoor('studio', 'paper', 'paper', {
        setting: 'sweep',
        light: { azimuth: -30, elevation: 50, color: LIGHT_COLOURS.neutral, intensity: 1.1, softness: 0.85 },
        ambient: { color: [1, 1, 1], intensity: 0.55 },
        vignette: 0.18,
        junction: 0.55,
        blur: 9,
        floorTint: { rgb: [0.88, 0.88, 0.87], amount: 0.5 },
        wallTint: { rgb: [0.88, 0.88, 0.87], amount: 0.5 },
      });
    case 'podium': {
      const s = familySpec('studio');
      s.name = 'podium';
      s.podium = { shape: 'cylinder', material: 'plaster' };
      s.floorTint = { rgb: [0.86, 0.8, 0.76], amount: 0.6 };
      s.wallTint = { rgb: [0.86, 0.8, 0.76], amount: 0.6 };
      s.light = { ...s.light, azimuth: -50, elevation: 40, softness: 0.6 };
      return s;
    }
    case 'kitchen':
      return indoor('kitchen', 'quartz', 'tile', {
        window: true,
        light: { azimuth: -55, elevation: 40, color: LIGHT_COLOURS.morning, intensity: 1.2, softness: 0.5 },
      });
    case 'bathroom':
      return indoor('bathroom', 'marble', 'tile', {
        light: { azimuth: 35, elevation: 50, color: [0.92, 0.96, 1.0], intensity: 1.15, softness: 0.75 },
        ambient: { color: [0.9, 0.95, 1.0], intensity: 0.55 },
        reflect: 0.15,
        wallTint: { rgb: [0.78, 0.88, 0.9], amount: 0.35 },
      });
    case 'interior':
      return indoor('interior', 'wood', 'shelves', {
        window: true,
        junction: 0.55,
        light: { azimuth: -60, elevation: 32, color: LIGHT_COLOURS.warm, intensity: 1.2, softness: 0.45 },
        ambient: { color: [1.0, 0.94, 0.88], intensity: 0.4 },
      });
    case 'drape':
      return indoor('drape', 'silk', 'drape', {
        light: { azimuth: -45, elevation: 35, color: LIGHT_COLOURS.neutral, intensity: 1.2, softness: 0.6 },
        junction: 0.55,
        vignette: 0.3,
      });
  }
}

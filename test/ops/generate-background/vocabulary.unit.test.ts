import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  BOKEH_WORDS,
  SCATTER_WORDS,
  COLOUR_WORDS,
  LIGHTING_TERMS,
  MATERIAL_WORDS,
  parsePrompt,
  PLACE_WORDS,
  PROP_WORDS,
} from '../../../src/ops/generate-background/prompt.js';

// The interpreter's contract: places pick a family, words land on the surface they name,
// negative prompts counter, and the report says honestly what was and was not understood.
describe('generate-background prompt interpreter', () => {
  it('reads the places sellers write (the prompts of issue 22 no longer give a tabletop)', () => {
    const beach = parsePrompt('sunlit beach with sand and ocean', undefined, 1);
    expect(beach.family).toBe('beach');
    expect(beach.spec.setting).toBe('open');
    expect(beach.spec.far?.material).toBe('sea');
    expect(beach.ignored).toEqual([]);
    const forest = parsePrompt('forest trail at dusk', undefined, 1);
    expect(forest.family).toBe('forest');
    expect(forest.spec.skyline).toBe('forest');
    expect(forest.spec.light.elevation).toBeLessThan(10);
    expect(forest.ignored).toEqual([]);
    const cases: [string, string][] = [
      ['green grass in the garden', 'garden'],
      ['fresh snow', 'snow'],
      ['by the pool', 'pool'],
      ['on the lake', 'water'],
      ['rocky cliff', 'rocks'],
      ['sahara dunes', 'desert'],
      ['downtown street', 'city'],
      ['blue sky and clouds', 'sky'],
      ['seamless paper sweep', 'studio'],
      ['on a pedestal', 'podium'],
      ['kitchen counter', 'kitchen'],
      ['spa bathroom', 'bathroom'],
      ['living room shelf', 'interior'],
      ['silk drapes', 'drape'],
      ['walnut table', 'tabletop'],
    ];
    for (const [p, fam] of cases) expect(parsePrompt(p, undefined, 1).family, p).toBe(fam);
  });

  it('binds words to what they describe: phrases with on / against / colour + noun', () => {
    const s = parsePrompt('pink podium against a sage green wall', undefined, 1).spec;
    expect(s.podium?.tint?.rgb[0]).toBeGreaterThan(0.9);
    expect(s.wallTint!.rgb[1]).toBeGreaterThan(s.wallTint!.rgb[0]);
    expect(parsePrompt('marble pedestal in a studio', undefined, 1).spec.podium?.material).toBe('marble');
    expect(parsePrompt('on concrete, against brick', undefined, 1).spec).toMatchObject({ floor: 'concrete', wall: 'brick' });
    // A material before a place names the place: no pine table in a pine forest.
    expect(parsePrompt('pine forest', undefined, 1).spec.floor).toBe('forestfloor');
    // A colour right before a material is that material's colour, wherever the material goes.
    const black = parsePrompt('luxury black marble with gold tones', undefined, 1).spec;
    expect(black.floor).toBe('marble');
    expect(black.floorTint!.rgb[0]).toBeLessThan(0.2);
    // Places combine: a shore by a lake; drapes with a display podium; a rustic cafe's wooden table.
    const shore = parsePrompt('on pebbles at the lake shore', undefined, 1);
    expect([shore.family, shore.spec.far?.material, shore.spec.props?.kind]).toEqual(['beach', 'sea', 'pebbles']);
    const drape = parsePrompt('navy velvet drapes, jewelry display', undefined, 1);
    expect([drape.family, drape.spec.wall, drape.spec.podium?.shape]).toEqual(['drape', 'drape', 'cylinder']);
    expect(parsePrompt('rustic cafe table by a window', undefined, 1).spec.floor).toBe('wood');
    // Props take the colour named with them.
    const petals = parsePrompt('red rose petals on linen', undefined, 1).spec;
    expect(petals.props?.kind).toBe('petals');
    expect(petals.props?.colour?.[0]).toBeGreaterThan(0.7);
    expect(parsePrompt('scattered rose petals on linen', undefined, 1).spec.props!.density).toBeGreaterThan(petals.props!.density);
  });

  it('sets time of day and weather on the sky and the light', () => {
    const night = parsePrompt('city street at night', undefined, 1).spec;
    expect(night.sky!.zenith[2]).toBeLessThan(0.1);
    expect(night.bokeh?.count).toBeGreaterThan(20);
    const rain = parsePrompt('rainy street', undefined, 1).spec;
    expect(rain.wet).toBe(true);
    expect(rain.reflect).toBeGreaterThan(0.2);
    expect(parsePrompt('foggy meadow', undefined, 1).spec.haze).toBeGreaterThan(0.5);
    expect(parsePrompt('beach, overcast', undefined, 1).spec.sky!.clouds).toBeGreaterThan(0.8);
    const golden = parsePrompt('desert at golden hour', undefined, 1).spec;
    expect(golden.sky!.horizon[0] - golden.sky!.horizon[2]).toBeGreaterThan(0.5);
  });

  it('negative prompts remove places, props, bokeh, and accept what scenes never contain', () => {
    const r = parsePrompt('tropical beach with palm trees and shells', 'palm trees, shells, people, text', 1);
    expect(r.family).toBe('beach');
    expect(r.spec.props).toBeUndefined();
    expect(r.spec.skyline).toBe('none');
    expect(parsePrompt('tropical beach with palm trees', undefined, 1).spec.skyline).toBe('palms');
    expect(r.negated).toEqual(expect.arrayContaining(['shells', 'people', 'text']));
    expect(parsePrompt('city at night', 'bokeh', 1).spec.bokeh).toBeUndefined();
    expect(parsePrompt('beach or forest', 'beach', 1).family).toBe('forest');
  });

  it('reports terms understood and content words ignored, not counting grammar and photo boilerplate', () => {
    const r = parsePrompt('a professional product photo of the bottle on wet zorbly asphalt, 4k', undefined, 1);
    expect(r.ignored).toEqual(['bottle', 'zorbly']);
    expect(r.contentWords).toBe(4);
    expect(r.terms).toEqual(expect.arrayContaining(['wet', 'asphalt->floor:asphalt']));
  });

  it('understands at least 90% of the content words of prompts written like sellers write them', () => {
    const prompts = [
      'minimal white marble countertop with soft morning light',
      'sunny beach with turquoise sea and white sand',
      'rustic oak table in a cozy cabin, warm candlelight',
      'on a concrete ledge against a clear blue sky',
      'snowy pine forest, cold winter morning',
      'pastel blue podium with soft shadows, studio',
      'rainy night street with neon bokeh',
      'dried flowers scattered on beige linen',
      'luxury black velvet drape, dramatic spotlight',
      'poolside at golden hour, summer vibes',
      'moss and ferns in a misty forest',
      'sage green colour paper backdrop',
      'bathroom shelf with white tiles and plants',
      'desert rocks under harsh noon sun',
      'autumn leaves on a wooden bench in the park',
    ];
    let content = 0,
      ignored = 0;
    for (const p of prompts) {
      const r = parsePrompt(p, undefined, 1);
      content += r.contentWords;
      ignored += r.ignored.length;
    }
    expect((content - ignored) / content).toBeGreaterThanOrEqual(0.9);
  });
});

describe('generate-background vocabulary documentation', () => {
  it('lists every word the interpreter knows in docs/ops/generate-background.md', () => {
    const doc = readFileSync(resolve(__dirname, '../../../docs/ops/generate-background.md'), 'utf8').toLowerCase();
    const words = [
      ...Object.keys(PLACE_WORDS),
      ...Object.keys(PROP_WORDS),
      ...Object.keys(MATERIAL_WORDS),
      ...Object.keys(COLOUR_WORDS),
      ...LIGHTING_TERMS.flatMap((t) => t.words),
      ...BOKEH_WORDS,
      ...SCATTER_WORDS,
    ];
    const missing = words.filter((w) => !new RegExp(`\\b${w}\\b`).test(doc) && !new RegExp(`\\b${w.replace(/-/g, ' ')}\\b`).test(doc));
    expect(missing).toEqual([]);
  });
});

import { describe, expect, it } from 'vitest';
import { parsePrompt } from '../../../src/ops/generate-background/prompt.js';
import { PRESETS } from '../../../src/ops/generate-background/scenes.js';

describe('generate-background prompt vocabulary', () => {
  it('reads materials onto the surfaces they name', () => {
    const { spec } = parsePrompt('walnut table against a concrete wall', undefined, 1);
    expect([spec.floor, spec.wall]).toEqual(['darkwood', 'concrete']);
    expect(parsePrompt('marble on white tiles', undefined, 1).spec).toMatchObject({ floor: 'marble', wall: 'tile' });
  });

  it('maps lighting and mood words to the light', () => {
    const sunset = parsePrompt('wood table at sunset', undefined, 1).spec;
    expect(sunset.light.elevation).toBeLessThan(15);
    expect(sunset.light.color[0] - sunset.light.color[2]).toBeGreaterThan(0.5);
    expect(sunset.window).toBe(true);
    const soft = parsePrompt('wood, soft', undefined, 1).spec.light.softness;
    const hard = parsePrompt('wood, dramatic', undefined, 1).spec.light.softness;
    expect(soft).toBeGreaterThan(hard + 0.5);
    expect(parsePrompt('luxury', undefined, 1).spec.floor).toBe('marble');
  });

  it('negative prompt removes materials and counters attributes', () => {
    const noMarble = parsePrompt('marble table', 'marble', 1).spec;
    expect(noMarble.floor).not.toBe('marble');
    const plain = parsePrompt('linen', undefined, 1).spec;
    const notDark = parsePrompt('linen', 'dark', 1).spec;
    expect(notDark.exposure).toBeGreaterThan(plain.exposure);
    const notWarm = parsePrompt('wood table', 'warm', 1).spec;
    expect(notWarm.light.color[2]).toBeGreaterThan(PRESETS.wood!.light.color[2]);
    // Brick is red by nature: "no red" greys it.
    expect(parsePrompt('brick wall', 'red', 1).spec.wallTint?.rgb).toEqual([0.6, 0.6, 0.6]);
    expect(parsePrompt('sunny window, wood', 'window', 1).spec.window).toBe(false);
  });

  it('uses the seed only to choose when the prompt names nothing', () => {
    const picks = new Set([1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((s) => parsePrompt('a nice photo', undefined, s).spec.floor));
    expect(picks.size).toBeGreaterThan(1);
    expect(parsePrompt('a nice photo', undefined, 4).spec).toEqual(parsePrompt('a nice photo', undefined, 4).spec);
  });
});

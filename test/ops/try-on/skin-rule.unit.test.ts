// The try-on bench (bench/lib/try-on-metrics.mjs) is plain JavaScript run by node without a build,
// so it carries its own copy of skin.ts's colour rule to tell the photo's bare skin from clothing.
// The two must judge every colour alike, or the bench's old-clothing and face figures would count
// by a different rule than the one the renderer keeps skin in front by.
import { describe, expect, it } from 'vitest';
// @ts-expect-error plain ESM bench helper without type declarations
import { isSkin } from '../../../bench/lib/try-on-metrics.mjs';
import { skinMask } from '../../../src/ops/try-on/skin.js';

describe("the bench's skin rule", () => {
  it('judges every colour of a 4-level RGB lattice as skin.ts does', () => {
    const colours: number[] = [];
    for (let r = 0; r < 256; r += 4) for (let g = 0; g < 256; g += 4) for (let b = 0; b < 256; b += 4) colours.push(r, g, b);
    const n = colours.length / 3;
    const ours = skinMask(Uint8Array.from(colours), n, 1, 3).data;
    let skin = 0,
      differ = 0;
    for (let i = 0; i < n; i++) {
      const bench = isSkin(colours[i * 3]!, colours[i * 3 + 1]!, colours[i * 3 + 2]!) ? 1 : 0;
      skin += ours[i]!;
      if (bench !== ours[i]) differ++;
    }
    // The lattice holds skin tones and others, so agreement is not agreement on "no".
    expect(skin).toBeGreaterThan(1000);
    expect(skin).toBeLessThan(n / 4);
    expect(differ).toBe(0);
  });
});

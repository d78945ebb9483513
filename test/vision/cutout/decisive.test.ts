import { describe, expect, it } from 'vitest';
import { configureCutout, cutoutSubject } from '../../../src/vision/cutout/cutout.js';
import { primaryDecisive } from '../../../src/vision/cutout/fusion.js';
import { segment } from '../../../src/engine/segment.js';
import { FIXTURES } from '../../helpers.js';
// @ts-expect-error -- an .mjs module without type declarations
import { framingCase } from '../../../bench/remove-background-set.mjs';

/**
 * Round 13: U2-Net-p (about a sixth of the default mode's time) is not run where ISNet's mask
 * settles the cut-out (fusion.ts primaryDecisive). Where it is skipped, the cut-out must be the one
 * the fusion gives with U2-Net-p's mask: checked on a frame-filling product, with real models.
 * Where it must run, the tests that need it fail without it: multipart.test.ts's trophy (ISNet
 * confident on 9.6% of the frame, one region, misses the plinth U2-Net-p finds: it failed with
 * DECISIVE.subject at 0.05) and its --keep all case (U2-Net-p's second object).
 */
describe('remove-background skips U2-Net-p only where it changes nothing', () => {
  it('a frame-filling sneaker on gravel: ISNet decides, and the cut-out is the same as with U2-Net-p', async () => {
    const c = await framingCase(FIXTURES, 'large', 1);
    const img = { data: Buffer.from(c.rgb), width: c.width, height: c.height, channels: 3 as const };
    const { mask } = await segment(img, 'isnet', { size: 1024, keepAspect: true });
    expect(primaryDecisive(mask, c.width, c.height)).toBe(true);
    try {
      configureCutout({ isnetModel: 'isnet', alwaysSecond: true });
      const withSecond = await cutoutSubject(img);
      configureCutout({ alwaysSecond: false });
      const skipped = await cutoutSubject(img);
      let differ = 0;
      for (let i = 0; i < skipped.mask.length; i++) if (skipped.mask[i] !== withSecond.mask[i]) differ++;
      expect(differ / skipped.mask.length).toBeLessThan(0.0005);
    } finally {
      configureCutout({ alwaysSecond: false });
    }
  }, 180_000);
});

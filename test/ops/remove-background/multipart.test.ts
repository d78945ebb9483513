import { describe, expect, it } from 'vitest';
import sharp from 'sharp';
import { bufferInput, FIXTURES, runOp } from '../../helpers.js';
import { scoreAlpha } from './composites.js';
// The bench's evaluation set (plain JS, shared so that tests and bench judge the same objects).
// @ts-expect-error -- an .mjs module without type declarations
import { alphaParts, buildCase, compose, MULTI, SINGLE } from '../../../bench/remove-background-set.mjs';

interface Case {
  rgb: Buffer;
  alpha: Uint8Array;
  width: number;
  height: number;
}

const W = 400,
  H = 300;

async function cutOut(c: Case, options: Record<string, unknown> = {}) {
  const file = await sharp(c.rgb, { raw: { width: c.width, height: c.height, channels: 3 } })
    .jpeg({ quality: 92 })
    .toBuffer();
  const { result } = await runOp('remove-background', { image: bufferInput('case.jpg', file) }, { mask_only: true, ...options });
  const alpha = new Uint8Array(await sharp(result.data!).extractChannel(0).raw().toBuffer());
  return { alpha, meta: result.meta as { parts: Array<{ area: number; left: number; top: number; width: number; height: number }>; keep: string } };
}

/** Share of each true part's pixels that the cut-out keeps (alpha >= 128), largest part first. */
function partRecall(c: Case, alpha: Uint8Array): number[] {
  const parts: Array<{ pixels: number[] }> = alphaParts(c.alpha, c.width, c.height, 20);
  return parts.map((p) => p.pixels.filter((i) => alpha[i]! >= 128).length / p.pixels.length);
}

describe('remove-background: every part of a multi-part object is kept', () => {
  // On a busy real texture (brick), each object as the bench composes it from its pieces.
  it.each(Object.keys(MULTI) as string[])(
    '%s: every part at least 80%% kept, IoU >= 0.85',
    async (object) => {
      const c: Case = await compose(FIXTURES, { object, backdropFile: 'textures/brick.png', kind: 'busy', width: W, height: H, size: 0.75, x: 0.4, y: 0.5 });
      const { alpha, meta } = await cutOut(c);
      const recall = partRecall(c, alpha);
      expect(recall.length).toBeGreaterThanOrEqual(1);
      for (const r of recall) expect(r).toBeGreaterThanOrEqual(0.8);
      expect(scoreAlpha(alpha, c.alpha, W, H).iou).toBeGreaterThanOrEqual(0.85);
      expect(meta.parts.length).toBeGreaterThanOrEqual(1);
    },
    120_000,
  );
});

describe('remove-background: single objects keep their quality', () => {
  it.each(SINGLE as string[])(
    '%s on brick: IoU >= 0.95, boundary-band error <= 0.1',
    async (object) => {
      const c: Case = await compose(FIXTURES, { object, backdropFile: 'textures/brick.png', kind: 'busy', width: W, height: H, size: 0.75, x: 0.4, y: 0.5 });
      const { alpha, meta } = await cutOut(c);
      const s = scoreAlpha(alpha, c.alpha, W, H);
      expect(s.iou).toBeGreaterThanOrEqual(0.95);
      expect(s.boundary).toBeLessThanOrEqual(0.1);
      expect(meta.parts).toHaveLength(1);
    },
    120_000,
  );
});

describe('remove-background --keep', () => {
  // A pair of shoes: two separate objects of about the same size.
  const pair = () =>
    compose(FIXTURES, {
      object: 'shoe-pair',
      backdropFile: 'textures/gravel.png',
      kind: 'low-contrast',
      width: W,
      height: H,
      size: 0.6,
      x: 0.5,
      y: 0.5,
    }) as Promise<Case>;

  it('auto (default) keeps both shoes and reports two parts with their areas', async () => {
    const c = await pair();
    const { alpha, meta } = await cutOut(c);
    expect(meta.keep).toBe('auto');
    for (const r of partRecall(c, alpha)) expect(r).toBeGreaterThan(0.9);
    expect(meta.parts).toHaveLength(2);
    const truth = alphaParts(c.alpha, W, H, 20) as Array<{ area: number }>;
    for (const [i, p] of meta.parts.entries()) expect(Math.abs(p.area - truth[i]!.area) / truth[i]!.area).toBeLessThan(0.15);
  }, 120_000);

  it('largest keeps one shoe only', async () => {
    const c = await pair();
    const { alpha, meta } = await cutOut(c, { keep: 'largest' });
    const recall = partRecall(c, alpha);
    expect(recall.filter((r) => r > 0.9)).toHaveLength(1);
    expect(recall.filter((r) => r < 0.05)).toHaveLength(1);
    expect(meta.parts).toHaveLength(1);
  }, 120_000);

  it('all keeps a second, smaller salient object that auto leaves out', async () => {
    // A handbag, and an apple in the corner that only U2-Net-p is confident about.
    const c = (await compose(FIXTURES, {
      object: 'handbag',
      backdropFile: 'textures/gravel.png',
      kind: 'low-contrast',
      width: W,
      height: H,
      size: 0.9,
      x: 0.2,
      y: 0.5,
    })) as Case;
    const apple = (await compose(FIXTURES, {
      object: 'apple',
      backdropFile: 'textures/gravel.png',
      kind: 'low-contrast',
      width: W,
      height: H,
      size: 0.25,
      x: 0.98,
      y: 0.02,
    })) as Case;
    for (let i = 0; i < W * H; i++) {
      const a = apple.alpha[i]!;
      if (!a) continue;
      for (let k = 0; k < 3; k++) c.rgb[i * 3 + k] = Math.round((apple.rgb[i * 3 + k]! * a + c.rgb[i * 3 + k]! * (255 - a)) / 255);
    }
    const applePixels = Array.from({ length: W * H }, (_, i) => i).filter((i) => apple.alpha[i]! >= 128);
    const bagPixels = Array.from({ length: W * H }, (_, i) => i).filter((i) => c.alpha[i]! >= 128);
    const kept = (px: number[], alpha: Uint8Array) => px.filter((i) => alpha[i]! >= 128).length / px.length;
    const auto = await cutOut(c);
    const all = await cutOut(c, { keep: 'all' });
    expect(kept(bagPixels, auto.alpha)).toBeGreaterThan(0.95);
    expect(kept(bagPixels, all.alpha)).toBeGreaterThan(0.95);
    expect(kept(applePixels, auto.alpha)).toBeLessThan(0.05);
    expect(kept(applePixels, all.alpha)).toBeGreaterThan(0.8);
    expect(auto.meta.parts).toHaveLength(1);
    expect(all.meta.parts).toHaveLength(2);
  }, 120_000);

  it('rejects an unknown keep value with the allowed ones', async () => {
    await expect(runOp('remove-background', { image: bufferInput('x.png', Buffer.from('')) }, { keep: 'biggest' })).rejects.toThrow(/auto.*largest.*all/);
  });
});

describe('remove-background: a second look when the models are unsure (recrop.ts)', () => {
  // The bench's case 05: two blue earrings on a washed-out fruit stall. On the whole frame both
  // models prefer a piece of the fruit (IoU 0.000 before round 6); on crops around the gems,
  // found by their colour contrast, both gems are cut out.
  it('finds both earrings on the fruit stall, and nothing of the fruit', async () => {
    const c: Case & { name: string } = await buildCase(FIXTURES, 5, 640, 480);
    expect(c.name).toContain('earrings-on-fruits');
    const { alpha } = await cutOut(c);
    const recall = partRecall(c, alpha);
    // The two gems are the two largest parts; the thin hooks may be lost.
    expect(recall.length).toBeGreaterThanOrEqual(2);
    expect(recall[0]).toBeGreaterThanOrEqual(0.8);
    expect(recall[1]).toBeGreaterThanOrEqual(0.8);
    expect(scoreAlpha(alpha, c.alpha, c.width, c.height).iou).toBeGreaterThanOrEqual(0.85);
  }, 180_000);
});

describe('remove-background: the frame cut keeps the product whole (frame.ts, fusion.ts)', () => {
  // The bench's case 32: socks hanging on a plant pot that only U2-Net-p takes; the cut of the
  // pot (it runs out of the frame) reached into the toes over it (IoU 0.796 before round 7).
  it('keeps the socks whole where they overlap the pot that is cut away', async () => {
    const c: Case & { name: string } = await buildCase(FIXTURES, 32, 640, 480);
    expect(c.name).toContain('socks-on-plant');
    const { alpha } = await cutOut(c);
    const recall = partRecall(c, alpha);
    expect(recall.length).toBe(2);
    for (const r of recall) expect(r).toBeGreaterThanOrEqual(0.9);
    expect(scoreAlpha(alpha, c.alpha, c.width, c.height).iou).toBeGreaterThanOrEqual(0.9);
  }, 180_000);

  // The bench's case 15: an orange crown over half an orange that both models merge into it; the
  // cut of the orange crossed the crown's weak outline and took its middle spike (IoU 0.766 before).
  it('keeps an orange crown whole when the orange behind it is cut away', async () => {
    const c: Case & { name: string } = await buildCase(FIXTURES, 15, 640, 480);
    expect(c.name).toContain('crown-on-fruits');
    const { alpha } = await cutOut(c);
    expect(partRecall(c, alpha)[0]).toBeGreaterThanOrEqual(0.9);
    expect(scoreAlpha(alpha, c.alpha, c.width, c.height).iou).toBeGreaterThanOrEqual(0.9);
  }, 180_000);

  // The bench's case 23: a pair of leather shoes over the fruit stall's orange. U2-Net-p is sure of
  // both shoes; ISNet (at the image's aspect, round 8) takes the orange and a piece of it that runs
  // out at the top edge, and gives the shoes nothing. Cutting the union, that piece bridged the
  // shoes to the frame and the cut took them (IoU 0.14); each model's mask cut on its own keeps
  // them, and as the orange's leftovers are the only two-model core, the shoes are the body.
  it('keeps both leather shoes when ISNet took only the orange behind them', async () => {
    const c: Case & { name: string } = await buildCase(FIXTURES, 23, 640, 480);
    expect(c.name).toContain('leather-shoe-pair-on-fruits');
    const { alpha } = await cutOut(c);
    const recall = partRecall(c, alpha);
    expect(recall.length).toBe(2);
    for (const r of recall) expect(r).toBeGreaterThanOrEqual(0.9);
    expect(scoreAlpha(alpha, c.alpha, c.width, c.height).iou).toBeGreaterThanOrEqual(0.8);
  }, 180_000);

  // The bench's case 00: headphones over the fruit stall's orange. The frame cut removes the
  // orange, but the piece inside the headband's arc (its white pith) both models merged into the
  // headphones stayed (IoU 0.787 in round 8 before the closer look). On a crop around the cut-out,
  // where the orange is mostly out of view, ISNet gives the headphones alone.
  it("takes the orange pith out of the headphones' arc with a closer look", async () => {
    const c: Case & { name: string } = await buildCase(FIXTURES, 0, 640, 480);
    expect(c.name).toContain('headphones-on-fruits');
    const { alpha } = await cutOut(c);
    for (const r of partRecall(c, alpha)) expect(r).toBeGreaterThanOrEqual(0.9);
    expect(scoreAlpha(alpha, c.alpha, c.width, c.height).iou).toBeGreaterThanOrEqual(0.9);
  }, 180_000);

  // The bench's case 38: a sneaker over the orange. There the crop's cut-out took in more of the
  // orange than the first one had (0.989 -> 0.956): a closer look may only take away.
  it('keeps the first cut-out when the closer look reaches beyond it (a sneaker over the orange)', async () => {
    const c: Case & { name: string } = await buildCase(FIXTURES, 38, 640, 480);
    expect(c.name).toContain('sneaker-on-fruits');
    const { alpha } = await cutOut(c);
    expect(scoreAlpha(alpha, c.alpha, c.width, c.height).iou).toBeGreaterThanOrEqual(0.975);
  }, 180_000);
});

describe('remove-background: parts only the image shows, backdrop seen through an opening (round 10)', () => {
  // The bench's case 09: cherries on the potted plant. The set cuts the lime stem and leaf off the
  // balls; both models give them ~0.01 in every view, so only the image shows them: one smooth,
  // strongly outlined region amid the plant's busy leaves, next to the balls (image-parts.ts).
  // Before round 10 the cut-out was the two balls alone (IoU 0.683, the set's worst).
  it("keeps the cherries' stem and leaf that neither model sees", async () => {
    const c: Case & { name: string } = await buildCase(FIXTURES, 9, 640, 480);
    expect(c.name).toContain('cherries-on-plant');
    const { alpha } = await cutOut(c);
    const recall = partRecall(c, alpha);
    // The two balls and the stem with its leaf.
    expect(recall.length).toBe(3);
    for (const r of recall) expect(r).toBeGreaterThanOrEqual(0.85);
    expect(scoreAlpha(alpha, c.alpha, c.width, c.height).iou).toBeGreaterThanOrEqual(0.9);
  }, 180_000);

  // The bench's case 40: headphones on the potted plant, whose blue clothes-peg shows inside the
  // arc, between the headband and the left cup. Both models are sure of the peg (0.95, 0.96); it
  // is a colour found nowhere else in the cut-out, standing across the arc's opening with the
  // plant on both sides (opening.ts). Before round 10 it stayed (IoU 0.698).
  it("drops the backdrop's peg seen through the headphones' arc", async () => {
    const c: Case & { name: string } = await buildCase(FIXTURES, 40, 640, 480);
    expect(c.name).toContain('headphones-on-plant');
    const { alpha } = await cutOut(c);
    for (const r of partRecall(c, alpha)) expect(r).toBeGreaterThanOrEqual(0.85);
    let kept = 0;
    for (let i = 0; i < alpha.length; i++) if (alpha[i]! >= 128 && c.alpha[i]! < 128) kept++;
    // The peg alone was about 7,400 pixels of backdrop in the cut-out.
    expect(kept).toBeLessThan(2000);
    expect(scoreAlpha(alpha, c.alpha, c.width, c.height).iou).toBeGreaterThanOrEqual(0.9);
  }, 180_000);
});

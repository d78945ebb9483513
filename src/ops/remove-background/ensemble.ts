/**
 * Two-model agreement for the default (quality) mode. ISNet draws finer edges; U2-Net-p is a
 * different network trained on different data, so the two rarely share a false positive: ISNet
 * tends to keep a second salient object in the backdrop (a fruit, a butterfly) that U2-Net-p
 * scores low, and the reverse. Keeping the per-pixel minimum keeps only what both call subject.
 * Measured on the bench composites (docs/ops/remove-background.md): IoU 0.738 (ISNet alone) ->
 * 0.845, with both masks cleaned and refined the same way.
 *
 * The minimum is only right when the models agree on which object is the subject:
 * - ISNet finds (almost) nothing that U2-Net-p finds: ISNet lost the subject (seen on a
 *   low-contrast subject over a face), so U2-Net-p's mask is used alone;
 * - each finds something, but they overlap little (one picks the pot, the other the peg on it):
 *   the minimum would be a fragment of either, so ISNet's mask is used alone, as without the check.
 */
export const LOST_SHARE = 0.1;
/** Overlap, as a share of the smaller of the two subjects, below which the models disagree. */
export const AGREE_SHARE = 0.5;

export type Agreement = 'both' | 'isnet' | 'u2netp';

/** Which mask(s) to trust, from the areas at alpha >= 128. */
export function agreement(isnet: Uint8Array, u2netp: Uint8Array): Agreement {
  let a = 0, b = 0, ab = 0;
  for (let i = 0; i < isnet.length; i++) {
    const x = isnet[i] >= 128, y = u2netp[i] >= 128;
    if (x) a++;
    if (y) b++;
    if (x && y) ab++;
  }
  if (a < LOST_SHARE * b) return 'u2netp';
  if (ab < AGREE_SHARE * Math.min(a, b)) return 'isnet';
  return 'both';
}

export function agreeMasks(isnet: Uint8Array, u2netp: Uint8Array): Uint8Array {
  const which = agreement(isnet, u2netp);
  if (which !== 'both') return which === 'isnet' ? isnet : u2netp;
  const out = new Uint8Array(isnet.length);
  for (let i = 0; i < out.length; i++) out[i] = isnet[i] < u2netp[i] ? isnet[i] : u2netp[i];
  return out;
}

// Types for baselines.mjs (the paddings outpaint is measured against).
export function baselineFill(
  rgb: Uint8Array,
  width: number,
  height: number,
  m: { left: number; right: number; top: number; bottom: number },
  kind: 'replicate' | 'mirror' | 'blur-extend',
): Promise<Uint8Array>;

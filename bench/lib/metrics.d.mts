// Types for metrics.mjs, so the TypeScript tests that judge quality with it type-check.
export interface Rect {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}
/** mae: mean absolute alpha error, 0..1; boundary: the same within `band` px of the true edge. */
export interface AlphaScores {
  iou: number;
  mae: number;
  boundary: number;
}
type Pixels = Uint8Array | Uint8ClampedArray | Buffer;
export function gaussianBlur(src: ArrayLike<number>, w: number, h: number, sigma: number): Float32Array;
export function psnr(a: Pixels, b: Pixels, width: number, r: Rect): number;
export function ssim(a: Pixels, b: Pixels, width: number, height: number, r: Rect): number;
export function seamFigure(canvas: Pixels, width: number, height: number, known: Rect, side: 'left' | 'right' | 'top' | 'bottom'): number;
export function sobelMean(canvas: Pixels, width: number, height: number, r: Rect): number;
export function maskIou(a: Pixels, b: Pixels): number;
export function scoreAlpha(pred: Pixels, truth: Pixels, w: number, h: number, band?: number): AlphaScores;

/** Types for gans.mjs (the not-shipped GANS candidate the bench and the converter's reference test run). */
export declare const GANS_PACKAGE: string;
export declare const GANS_MODEL_JSON: string;
export declare function gansModelJson(): string;
/** ONNX bytes: NCHW float32 0..255 in and out. */
export declare function gansOnnx(): Uint8Array;
export declare function gansUpscaler(opts?: {
  threads?: number;
}): Promise<(img: { data: Uint8Array; width: number; height: number }, scale: 2 | 4) => Promise<{ data: Uint8Array; width: number; height: number }>>;

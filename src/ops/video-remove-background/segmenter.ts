import { segmentBatch, type SegmentModel } from '../../engine/segment.js';

/**
 * The engine's segmentation for video frames. One frame per run: on 2 CPU cores u2netp is
 * slower per frame in batches of 4 than alone (measured: ~160 vs ~340 ms per frame), because
 * the batch's activations no longer fit in cache; the decoder and encoder already overlap
 * with inference in their own processes.
 */
export async function segmentFrame(rgb: Uint8Array, width: number, height: number, model: SegmentModel, signal?: AbortSignal): Promise<Uint8Array> {
  const [res] = await segmentBatch([{ data: rgb, width, height, channels: 3 }], model, { signal, batchSize: 1 });
  return res!.mask;
}

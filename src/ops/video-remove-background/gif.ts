import { readFile, writeFile } from 'node:fs/promises';

/**
 * ffmpeg 4.1's GIF muxer marks every frame "do not dispose", so with real transparency each
 * frame is drawn over the previous one and a moving subject leaves trails. Rewriting the
 * disposal method of every Graphic Control Extension to "restore to background" (2) makes
 * each frame replace the last. The walk follows the GIF block structure (never a byte
 * search), so LZW data that happens to contain 0x21 0xF9 is left alone.
 */
export function setGifDisposal(gif: Buffer, method: number): number {
  if (gif.toString('latin1', 0, 3) !== 'GIF') throw new Error('not a GIF');
  let p = 6;
  const lsdPacked = gif[p + 4]!;
  p += 7;
  if (lsdPacked & 0x80) p += 3 * (1 << ((lsdPacked & 7) + 1));
  let patched = 0;
  const skipSubBlocks = () => {
    while (p < gif.length) {
      const size = gif[p++]!;
      if (size === 0) return;
      p += size;
    }
  };
  while (p < gif.length) {
    const block = gif[p++]!;
    if (block === 0x3b) break;
    if (block === 0x21) {
      const label = gif[p++]!;
      if (label === 0xf9 && gif[p] === 4) {
        gif[p + 1] = (gif[p + 1]! & ~0x1c) | ((method & 7) << 2);
        patched++;
      }
      skipSubBlocks();
    } else if (block === 0x2c) {
      const packed = gif[p + 8]!;
      p += 9;
      if (packed & 0x80) p += 3 * (1 << ((packed & 7) + 1));
      p++; // LZW minimum code size
      skipSubBlocks();
    } else {
      throw new Error(`unexpected GIF block 0x${block.toString(16)} at byte ${p - 1}`);
    }
  }
  return patched;
}

export async function fixGifDisposal(path: string): Promise<number> {
  const gif = await readFile(path);
  const n = setGifDisposal(gif, 2);
  await writeFile(path, gif);
  return n;
}

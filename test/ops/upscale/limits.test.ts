// Every limit violation: its spec code, a message naming the file and the fix, and no output.
// None of these may reach the model, so each must fail fast even for big pixel counts.
import { describe, expect, it } from 'vitest';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { bufferInput, fileInput, runOp, tempDir } from '../../helpers.js';
import { cli } from '../../cli/harness.js';
import { fromRaw, padJpeg, photoRaw } from './media.js';

/** A flat image of any size: cheap to make and to decode. */
const flat = (width: number, height: number, format: 'png' | 'jpeg' = 'png') =>
  sharp({ create: { width, height, channels: 3, background: '#6a8' } })
    [format]()
    .toBuffer();

async function expectCode(buf: Buffer, name: string, scale: number, code: string, message?: RegExp): Promise<void> {
  const p = runOp('upscale', { image: bufferInput(name, buf) }, { scale, model: 'thick' });
  await expect(p).rejects.toMatchObject({ code });
  if (message) await expect(p).rejects.toThrow(message);
}

describe('upscale limits', () => {
  it('63x63 (and 64x63) -> image_too_small; 64x64 is accepted', async () => {
    await expectCode(await flat(63, 63), 'tiny.png', 2, 'image_too_small', /tiny\.png is 63x63; upscale needs at least 64x64 px/);
    await expectCode(await flat(64, 63), 'thin.png', 4, 'image_too_small');
    const ok = await runOp('upscale', { image: bufferInput('min.png', await flat(64, 64)) }, { scale: 2, model: 'slim' });
    expect(ok.result.meta).toMatchObject({ width: 128, height: 128 });
  });

  it('over 25 MB -> file_size_too_large, from memory and from a file, even when the pixels would also be too large', async () => {
    const small = await fromRaw(await photoRaw(96, 96))
      .jpeg()
      .toBuffer();
    const big = padJpeg(small, 25 * 1024 * 1024 + 1);
    // Still a valid JPEG: the only thing wrong with it is its size.
    expect((await sharp(big).metadata()).width).toBe(96);
    await expectCode(big, 'padded.jpg', 4, 'file_size_too_large', /padded\.jpg is 25\.\d MB; upscale accepts at most 25\.0 MB/);
    const dir = tempDir();
    const path = join(dir, 'padded.jpg');
    writeFileSync(path, big);
    await expect(runOp('upscale', { image: fileInput(path) }, { scale: 2 })).rejects.toMatchObject({ code: 'file_size_too_large' });
    const bigAndWide = padJpeg(await flat(1600, 1600, 'jpeg'), 26 * 1024 * 1024);
    await expectCode(bigAndWide, 'wide.jpg', 4, 'file_size_too_large');
  });

  it('1501x1501 at 4x -> image_too_large with the hint (scale 2 or the largest input that fits)', async () => {
    await expectCode(
      await flat(1501, 1501),
      'big.png',
      4,
      'image_too_large',
      /big\.png is 1501x1501; at 4x the output would be 6004x6004, over the 6000x6000 limit: use --scale 2, or downscale it to at most 1500x1500/,
    );
    await expectCode(await flat(2000, 1000), 'pano.png', 4, 'image_too_large', /downscale it to at most 1500x750/);
    await expectCode(await flat(3001, 1200), 'wide.png', 2, 'image_too_large', /at 2x the output would be 6002x2400.*: downscale it to at most 3000x1199/);
    // The hint uses the displayed (EXIF-rotated) size.
    const rotated = await sharp({ create: { width: 1600, height: 1000, channels: 3, background: '#6a8' } })
      .jpeg()
      .withMetadata({ orientation: 6 })
      .toBuffer();
    await expectCode(rotated, 'rot.jpg', 4, 'image_too_large', /rot\.jpg is 1000x1600; .* downscale it to at most 937x1500/);
  });

  it('a 6001 px input -> image_too_large naming the input limit', async () => {
    await expectCode(await flat(6001, 64), 'strip.png', 2, 'image_too_large', /strip\.png is 6001x64; upscale accepts at most 6000x6000 px/);
  });

  it('a text file named .jpg and an empty file -> invalid_image', async () => {
    await expectCode(Buffer.from('this is not a jpeg, just text\n'), 'notes.jpg', 2, 'invalid_image', /notes\.jpg is not a decodable image/);
    await expectCode(Buffer.alloc(0), 'empty.jpg', 2, 'invalid_image');
    const jpg = await fromRaw(await photoRaw(96, 96))
      .jpeg()
      .toBuffer();
    await expectCode(jpg.subarray(0, jpg.length >> 1), 'cut.jpg', 2, 'invalid_image');
  });

  it('through the CLI: every violation is reported with its code and leaves no output file', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'tiny.png'), await flat(63, 63));
    writeFileSync(
      join(dir, 'huge.jpg'),
      padJpeg(
        await fromRaw(await photoRaw(96, 96))
          .jpeg()
          .toBuffer(),
        26 * 1024 * 1024,
      ),
    );
    writeFileSync(join(dir, 'big.png'), await flat(1501, 1501));
    writeFileSync(join(dir, 'strip.png'), await flat(6001, 64));
    writeFileSync(join(dir, 'notes.jpg'), 'plain text');
    const r = await cli(['upscale', '*', '--scale', '4', '--json'], { cwd: dir });
    expect(r.code).toBe(1);
    const codes = Object.fromEntries(
      r.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l))
        .map((x) => [x.input, [x.status, x.error_code, x.output, x.credits]]),
    );
    expect(codes).toEqual({
      'tiny.png': ['failed', 'image_too_small', null, 0],
      'huge.jpg': ['failed', 'file_size_too_large', null, 0],
      'big.png': ['failed', 'image_too_large', null, 0],
      'strip.png': ['failed', 'image_too_large', null, 0],
      'notes.jpg': ['failed', 'invalid_image', null, 0],
    });
    expect(readdirSync(dir).sort()).toEqual(['big.png', 'huge.jpg', 'notes.jpg', 'strip.png', 'tiny.png']);
  });
});

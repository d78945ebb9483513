// Child-process body of offline.test.ts: arms the network block, then loads the engine and
// runs every model family once.
const g = globalThis as { __networkAttempts?: string[]; __armNetworkBlock?: () => void };
if (!g.__armNetworkBlock) throw new Error('block-network.mjs was not preloaded');
g.__armNetworkBlock();

const { upscaleRgb } = await import('../../../src/engine/esrgan.js');
const { segment } = await import('../../../src/engine/segment.js');
const { listModels } = await import('../../../src/engine/models.js');
const { detectPeople } = await import('../../../src/engine/people.js');
const sharp = (await import('sharp')).default;

const rgb = new Uint8Array(64 * 48 * 3).map((_, i) => (i * 31) % 256);
const mask = await segment({ data: rgb, width: 64, height: 48, channels: 3 }, 'u2netp');
const up = await upscaleRgb({ data: rgb, width: 64, height: 48 }, { model: 'slim', scale: 2 });
// The people models (BlazePose detector and landmarks, selfie segmentation) on a fixture person.
const photo = await sharp(new URL('../../fixtures/images/astronaut.png', import.meta.url).pathname)
  .removeAlpha()
  .raw()
  .toBuffer({ resolveWithObject: true });
const people = await detectPeople({ data: new Uint8Array(photo.data), width: photo.info.width, height: photo.info.height, channels: 3 }, { model: 'lite' });
process.stdout.write(
  JSON.stringify({
    attempts: g.__networkAttempts,
    maskLength: mask.mask.length,
    upscaled: [up.width, up.height],
    people: people.length,
    statuses: listModels().map((m) => m.status),
  }) + '\n',
);

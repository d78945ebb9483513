import { describe, expect, it } from 'vitest';
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { cli } from './harness.js';
import { fixture, tempDir } from '../helpers.js';

const dir = tempDir();
const img = join(dir, 'a.jpg');
copyFileSync(fixture('images/fruits.jpg'), img);
const vid = join(dir, 'clip.mp4'); // never decoded: parse-only runs stop before reading inputs
copyFileSync(fixture('images/fruits.jpg'), vid);

async function options(args: string[]) {
  const r = await cli(args, { parseOnly: true, cwd: dir });
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return r.invocation!.options;
}

async function usage(args: string[]) {
  const r = await cli(args, { parseOnly: true, cwd: dir });
  expect(r.code).toBe(2);
  return r.stderr.trim();
}

describe('argv to job options', () => {
  it('upscale', async () => {
    expect(await options(['upscale', 'a.jpg', '--scale', '4'])).toEqual({ scale: 4, model: 'thick', texture: 0.75, quality: 92, strip_metadata: false });
    expect(await options(['upscale', 'a.jpg', '--scale', '2', '--model', 'slim'])).toEqual({
      scale: 2,
      model: 'slim',
      texture: 0.75,
      quality: 92,
      strip_metadata: false,
    });
    expect(await options(['upscale', 'a.jpg', '--scale', '4', '--model', 'fast', '--texture', '0.3', '--quality', '80', '--strip-metadata'])).toEqual({
      scale: 4,
      model: 'fast',
      texture: 0.3,
      quality: 80,
      strip_metadata: true,
    });
    expect(await usage(['upscale', 'a.jpg', '--scale', '4', '--texture', '2'])).toBe('imgtool: --texture must be a number between 0 and 1, got 2');
    expect(await usage(['upscale', 'a.jpg', '--scale', '4', '--quality', '0'])).toBe('imgtool: --quality must be an integer between 1 and 100, got 0');
    expect(await usage(['upscale', 'a.jpg', '--scale', '3'])).toBe('imgtool: --scale must be 2 or 4, got 3');
    expect(await usage(['upscale', 'a.jpg'])).toBe('imgtool: --scale is required and must be 2 or 4');
    expect(await usage(['upscale', 'a.jpg', '--scale', '4', '--model', 'huge'])).toBe(
      'imgtool: --model must be one of slim, medium, thick, realesrgan, fast, got "huge"',
    );
  });

  it('outpaint', async () => {
    expect(await options(['outpaint', 'a.jpg', '--right', '512', '--bottom', '256'])).toEqual({
      left: 0,
      top: 0,
      right: 512,
      bottom: 256,
      creativity: 0,
      output_format: 'jpeg',
      quality: 92,
      strip_metadata: false,
    });
    expect(await options(['outpaint', 'a.jpg', '--left', '10', '--creativity', '0.5', '--output-format', 'png', '--seed', '7'])).toMatchObject({
      left: 10,
      creativity: 0.5,
      output_format: 'png',
      seed: 7,
    });
    expect(await usage(['outpaint', 'a.jpg'])).toBe('imgtool: at least one of --left, --top, --right, --bottom must be non-zero');
    expect(await usage(['outpaint', 'a.jpg', '--right', '2001'])).toBe('imgtool: --right must be an integer between 0 and 2000, got 2001');
    expect(await usage(['outpaint', 'a.jpg', '--right', '-1'])).toBe('imgtool: --right must be an integer between 0 and 2000, got -1');
    expect(await usage(['outpaint', 'a.jpg', '--right', '10', '--creativity', '1.5'])).toBe('imgtool: --creativity must be a number between 0 and 1, got 1.5');
    expect(await usage(['outpaint', 'a.jpg', '--right', '10', '--output-format', 'webp'])).toBe('imgtool: --output-format must be jpeg or png, got "webp"');
  });

  it('remove-background', async () => {
    expect(await options(['remove-background', 'a.jpg'])).toEqual({
      format: 'png',
      shadow: false,
      crop: false,
      model: 'isnet',
      mask_only: false,
      keep: 'auto',
      strip_metadata: false,
    });
    const withShadow = await options(['remove-background', 'a.jpg', '--shadow', '--crop', '--margin', '10%', '--margin-left', '20px']);
    expect(withShadow).toMatchObject({ shadow: true, crop: true, margin: '10%', margin_left: '20px' });
    expect(await options(['remove-background', 'a.jpg', '--shadow-opacity', '0.3', '--shadow-light-source-position-x', '0.5'])).toMatchObject({
      shadow: { enabled: true, opacity: 0.3, light_source: { size: 0.3, position: { x: 0.5, y: -0.6, z: 0.7 } } },
    });
    expect(await options(['remove-background', 'a.jpg', '--shadow', '{"enabled":true,"opacity":0.4}'])).toMatchObject({
      shadow: { enabled: true, opacity: 0.4 },
    });
    expect(await options(['remove-background', 'a.jpg', '--mask-only', '--background-color', '#00ff00', '--model', 'u2netp'])).toMatchObject({
      mask_only: true,
      background_color: '#00ff00',
      model: 'u2netp',
    });
    expect(await usage(['remove-background', 'a.jpg', '--margin', '50%'])).toBe(
      'imgtool: --margin must be a percentage like "10%" (0-49%) or pixels like "20px", got "50%"',
    );
    expect(await usage(['remove-background', 'a.jpg', '--margin-top', '-3px'])).toBe(
      'imgtool: --margin-top must be a percentage like "10%" (0-49%) or pixels like "20px", got "-3px"',
    );
    expect(await usage(['remove-background', 'a.jpg', '--shadow-opacity', '2'])).toBe('imgtool: --shadow-opacity must be a number between 0 and 1, got 2');
    expect(await usage(['remove-background', 'a.jpg', '--shadow-light-source-position-z', '3'])).toBe(
      'imgtool: --shadow-light-source-position-z must be a number between 0 and 2, got 3',
    );
    expect(await usage(['remove-background', 'a.jpg', '--format', 'jpeg'])).toBe('imgtool: --format must be png, got "jpeg"');
    expect(await usage(['remove-background', 'a.jpg', '--background-color', 'green'])).toBe(
      'imgtool: --background-color must be a colour like "#fff" or "#00ff00", got "green"',
    );
  });

  it('generate-background', async () => {
    expect(await options(['generate-background', 'a.jpg', '--scene', 'marble'])).toEqual({
      scene: 'marble',
      image_transform: { x_center: 0.5, y_center: 0.5 },
      quality: 92,
      strip_metadata: false,
    });
    expect(
      await options([
        'generate-background',
        'a.jpg',
        '--prompt',
        'warm wood',
        '--negative-prompt',
        'dark',
        '--image-transform-scale',
        '0.8',
        '--image-transform-x-center',
        '0.3',
      ]),
    ).toEqual({
      prompt: 'warm wood',
      negative_prompt: 'dark',
      image_transform: { scale: 0.8, x_center: 0.3, y_center: 0.5 },
      quality: 92,
      strip_metadata: false,
    });
    expect(await options(['generate-background', 'a.jpg', '--image-transform', '{"scale":1.5,"y_center":0.7}'])).toMatchObject({
      image_transform: { scale: 1.5, x_center: 0.5, y_center: 0.7 },
    });
    expect(await usage(['generate-background', 'a.jpg', '--scene', 'beach'])).toBe(
      'imgtool: --scene must be one of marble, wood, industrial, linen, brick, counter, got "beach"',
    );
    expect(await usage(['generate-background', 'a.jpg', '--image-transform-scale', '0'])).toBe(
      'imgtool: --image-transform-scale must be a number greater than 0 and at most 2, got 0',
    );
    expect(await usage(['generate-background', 'a.jpg', '--image-transform-y-center', '1.2'])).toBe(
      'imgtool: --image-transform-y-center must be a number between 0 and 1, got 1.2',
    );
  });

  it('try-on', async () => {
    const r = await cli(['try-on', '--person', 'a.jpg', '--garment', 'a.jpg', '--no-preprocess-garment', '--remove-background'], { parseOnly: true, cwd: dir });
    expect(r.code).toBe(0);
    expect(r.invocation!.options).toEqual({
      garment_mode: 'auto',
      preprocess_garment: false,
      remove_background: true,
      wait_for_result: true,
      quality: 92,
      strip_metadata: false,
    });
    expect(r.invocation!.tasks).toHaveLength(1);
    expect(Object.keys(r.invocation!.tasks[0]!.refs)).toEqual(['person', 'garment']);
    expect(await usage(['try-on', '--person', 'a.jpg'])).toBe('imgtool: try-on needs --garment <file|glob|url>');
    expect(await usage(['try-on', '--person', 'a.jpg', '--garment', 'a.jpg', '--garment-mode', 'sideways'])).toBe(
      'imgtool: --garment-mode must be one of auto, full, upper, lower, got "sideways"',
    );
  });

  it('video-loop', async () => {
    expect(await options(['video-loop', 'a.jpg'])).toEqual({ duration: 5, resolution: '1080p', include_audio: false, motion: 'subtle' });
    expect(
      await options(['video-loop', 'a.jpg', '--duration', '8', '--resolution', '768p', '--motion', 'spin', '--include-audio', '--prompt', 'gentle wind']),
    ).toEqual({
      duration: 8,
      resolution: '768p',
      motion: 'spin',
      include_audio: true,
      prompt: 'gentle wind',
    });
    expect(await usage(['video-loop', 'a.jpg', '--duration', '16'])).toBe('imgtool: --duration must be a whole number of seconds between 5 and 15, got 16');
    expect(await usage(['video-loop', 'a.jpg', '--duration', '5.5'])).toBe('imgtool: --duration must be a whole number of seconds between 5 and 15, got 5.5');
    expect(await usage(['video-loop', 'a.jpg', '--resolution', '720p'])).toBe('imgtool: --resolution must be one of 480p, 768p, 1080p, got "720p"');
    expect(await usage(['video-loop', 'a.jpg', '--prompt', 'x'.repeat(1001)])).toMatch(
      /^imgtool: --prompt must be at most 1000 characters, got "x{80}"\.\.\. \(1001 characters\)$/,
    );
  });

  it('video-remove-background', async () => {
    expect(await options(['video-remove-background', 'clip.mp4'])).toEqual({ output_format: 'mp4_h264', model: 'u2netp' });
    expect(await options(['video-remove-background', 'clip.mp4', '--output-format', 'webm_vp9', '--background-color', 'transparent'])).toMatchObject({
      output_format: 'webm_vp9',
      background_color: 'transparent',
    });
    expect(await usage(['video-remove-background', 'clip.mp4', '--background-color', 'transparent'])).toBe(
      'imgtool: --background-color "transparent" needs --output-format webm_vp9, mov_h265, mov_proresks or gif',
    );
    expect(await usage(['video-remove-background', 'clip.mp4', '--background-color', '#12345'])).toBe(
      'imgtool: --background-color must be "transparent", "#RGB" or "#RRGGBB", got "#12345"',
    );
    expect(await usage(['video-remove-background', 'clip.mp4', '--output-format', 'avi'])).toMatch(
      /^imgtool: --output-format must be one of mp4_h264, .*gif, got "avi"$/,
    );
  });

  it('config file defaults sit below flags', async () => {
    const home = tempDir();
    const { writeFileSync } = await import('node:fs');
    writeFileSync(join(home, 'config.json'), JSON.stringify({ options: { upscale: { scale: 4, model: 'slim' } } }));
    const fromConfig = await cli(['upscale', 'a.jpg'], { parseOnly: true, cwd: dir, home });
    expect(fromConfig.invocation!.options).toEqual({ scale: 4, model: 'slim', texture: 0.75, quality: 92, strip_metadata: false });
    const flagWins = await cli(['upscale', 'a.jpg', '--scale', '2'], { parseOnly: true, cwd: dir, home });
    expect(flagWins.invocation!.options).toEqual({ scale: 2, model: 'slim', texture: 0.75, quality: 92, strip_metadata: false });
  });

  it('unknown flags and commands are usage errors', async () => {
    const r = await cli(['upscale', 'a.jpg', '--scale', '2', '--bogus'], { parseOnly: true, cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unknown option '--bogus'");
    expect((await cli(['frobnicate'], { cwd: dir })).code).toBe(2);
  });
});

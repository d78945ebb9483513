// Issue 35, round 14: apollo11_crew.jpg's suit covers Armstrong's neck up to the chin (its neck
// ring). Worn, the t-shirt's collar ring lies at the neck's foot, and inside it its inner back was
// drawn from the collar up to the chin: a thick green band under the face. bare-neck.ts paints
// the neck there (bare-neck.unit.test.ts holds the rules).
import { describe, expect, it } from 'vitest';
import { median } from '../../../src/ops/try-on/raster.js';
import { fileInput, fixture } from '../../helpers.js';
import { renderPair, rgb } from './render.js';

const SLOW = 300_000;

describe('a neck covered by old clothing, worn', () => {
  it('shows a neck in his skin colour under the chin inside the t-shirt collar on apollo11_crew.jpg', { timeout: SLOW }, async () => {
    const res = await renderPair(fileInput(fixture('images/apollo11_crew.jpg')), fileInput(fixture('cutouts/tshirt.png')), 'flat');
    const out = await rgb(res.data as Buffer);
    const W = out.width;
    const L = (res.meta as { landmarks: Array<[number, number, number]> }).landmarks;
    const sw = Math.hypot(L[11]![0] - L[12]![0], L[11]![1] - L[12]![1]);
    const eyeY = (L[2]![1] + L[5]![1]) / 2,
      mouthY = (L[9]![1] + L[10]![1]) / 2;
    const chinY = mouthY + 0.6 * (mouthY - eyeY);
    // The chin lies below the mouth's middle.
    const mouthX = (L[9]![0] + L[10]![0]) / 2;
    // Chromaticity (r and g over r + g + b): the same under shading, as a neck in the jaw's shadow is.
    const chromaticity = (i: number) => {
      const s = out.data[i]! + out.data[i + 1]! + out.data[i + 2]! || 1;
      return [out.data[i]! / s, out.data[i + 1]! / s];
    };
    // The face's own: the cheeks between the eyes' and the mouth's rows.
    const faceR: number[] = [],
      faceG: number[] = [];
    for (let y = Math.round(eyeY + 3); y < mouthY; y++) {
      for (let x = Math.round(mouthX - 0.12 * sw); x <= mouthX + 0.12 * sw; x++) {
        const i = (y * W + x) * 3;
        const [r, g] = chromaticity(i);
        faceR.push(r!);
        faceG.push(g!);
      }
    }
    const [fr, fg] = [median(faceR), median(faceG)];
    // Under the chin, in the neck's middle: the share of pixels near the face's chromaticity.
    let n = 0,
      skin = 0;
    for (let y = Math.round(chinY + 0.04 * sw); y <= chinY + 0.2 * sw; y++) {
      for (let x = Math.round(mouthX - 0.05 * sw); x <= mouthX + 0.05 * sw; x++) {
        const i = (y * W + x) * 3;
        const [r, g] = chromaticity(i);
        n++;
        if (Math.hypot(r! - fr, g! - fg) <= 0.03) skin++;
      }
    }
    expect(n).toBeGreaterThan(100);
    // Measured: 0 of 198 before (the t-shirt's inner back), 198 after.
    expect(skin / n).toBeGreaterThan(0.8);
  });

  it("covers the turtleneck beside astronaut.png's painted neck, between it and the t-shirt's shoulders", { timeout: SLOW }, async () => {
    // Round 19: beside a neck painted up to the chin the band's pockets go up to it (the collar's
    // back lies there); they stayed off the neck's column, and her black turtleneck showed as a
    // wedge either side of the neck under the chin.
    const person = fixture('images/astronaut.png');
    const res = await renderPair(fileInput(person), fileInput(fixture('cutouts/tshirt.png')), 'flat');
    const [out, ref] = [await rgb(res.data as Buffer), await rgb(person)];
    const W = out.width;
    const meta = res.meta as { landmarks: Array<[number, number, number]>; face: { y: number; height: number }; body: { shoulder_y: number } };
    const L = meta.landmarks;
    const sw = Math.hypot(L[11]![0] - L[12]![0], L[11]![1] - L[12]![1]);
    const mouthX = (L[9]![0] + L[10]![0]) / 2;
    // From the chin to the shoulder line, 0.1 to 0.3 shoulder widths either side of the middle:
    // the photo's dark turtleneck left as it was.
    let n = 0,
      dark = 0;
    for (let y = meta.face.y + meta.face.height; y <= meta.body.shoulder_y; y++) {
      for (const side of [-1, 1]) {
        for (let d = Math.round(0.1 * sw); d <= 0.3 * sw; d++) {
          const i = (y * W + Math.round(mouthX + side * d)) * 3;
          const same = [0, 1, 2].every((c) => Math.abs(out.data[i + c]! - ref.data[i + c]!) <= 24);
          n++;
          if (same && 0.299 * out.data[i]! + 0.587 * out.data[i + 1]! + 0.114 * out.data[i + 2]! < 60) dark++;
        }
      }
    }
    // Measured: 212 of 3724 (0.057) with the pockets kept off the neck column, 0 now.
    expect(n).toBeGreaterThan(2000);
    expect(dark / n).toBeLessThan(0.01);
  });
});

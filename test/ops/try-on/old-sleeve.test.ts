// Issue 35, eleventh round: the issue's own footballer (messi5.jpg). His jersey's sleeves reach
// his elbows, the t-shirt's own sleeves half as far: the red sleeve and its yellow cuff showed
// past the t-shirt's sleeve at his bent elbow. old-sleeve.ts finds where the photo's sleeve ends
// along the arm and the new sleeve reaches it. And a long sleeve laid along his bare forearm had
// a hole at the elbow's crease: the forearm capsule held the photo's shadow there and stayed in
// front of the sleeve (pipeline.ts sleeveOccluder).
import { describe, expect, it } from 'vitest';
import { fileInput, fixture } from '../../helpers.js';
import { countNear, jersey, renderPair, rgb } from './render.js';

const SLOW = 300_000;

type Landmarks = Array<[number, number, number]>;

async function render(garment: string) {
  const res = await renderPair(fileInput(fixture('images/messi5.jpg')), fileInput(fixture(garment)), 'flat');
  return { out: await rgb(res.data as Buffer), L: (res.meta as { landmarks: Landmarks }).landmarks };
}

describe('old sleeves at the elbow', () => {
  it('the t-shirt covers messi5.jpg red sleeve and yellow cuff at his bent elbow', { timeout: SLOW }, async () => {
    const ref = await rgb(fixture('images/messi5.jpg'));
    const { out, L } = await render('cutouts/tshirt.png');
    const sw = Math.hypot(L[11]![0] - L[12]![0], L[11]![1] - L[12]![1]);
    // The image-left arm's elbow (his left, landmark 14), within 0.2 shoulder widths: the old
    // sleeve's end and cuff; the jersey's sleeve opening hanging below the arm lies further.
    const e = L[12]![0] < L[11]![0] ? L[14]! : L[13]!;
    const inPhoto = countNear(ref, e[0], e[1], 0.2 * sw, jersey);
    const shown = countNear(out, e[0], e[1], 0.2 * sw, jersey);
    // Measured: of 76 jersey pixels in the photo, 36 still showed before (the cuff and a red
    // triangle of sleeve past the t-shirt's sleeve end), 1 after.
    expect(inPhoto).toBeGreaterThan(60);
    expect(shown / inPhoto).toBeLessThan(0.05);
  });

  it('a long sleeve along messi5.jpg bare forearm has no hole at the elbow crease', { timeout: SLOW }, async () => {
    const ref = await rgb(fixture('images/messi5.jpg'));
    const { out, L } = await render('cutouts/coat.png');
    const sw = Math.hypot(L[11]![0] - L[12]![0], L[11]![1] - L[12]![1]);
    // The image-right arm (his right, landmarks 11 -> 13 -> 15), bent: the crease lies above
    // the forearm's line at the elbow, between it and the upper arm; below that line is the
    // dark backdrop under the arm, which the sleeve does not reach.
    const [e, w] = L[12]![0] < L[11]![0] ? [L[13]!, L[15]!] : [L[14]!, L[16]!];
    const len = Math.hypot(w[0] - e[0], w[1] - e[1]);
    const nx = -(w[1] - e[1]) / len,
      ny = (w[0] - e[0]) / len;
    const upper = ny < 0 ? 1 : -1;
    let n = 0,
      left = 0;
    const r = 0.1 * sw;
    for (let y = Math.floor(e[1] - r); y <= Math.ceil(e[1] + r); y++) {
      for (let x = Math.floor(e[0] - r); x <= Math.ceil(e[0] + r); x++) {
        if (Math.hypot(x - e[0], y - e[1]) > r || upper * ((x - e[0]) * nx + (y - e[1]) * ny) <= 0) continue;
        const i = (y * ref.width + x) * 3;
        if (0.299 * ref.data[i]! + 0.587 * ref.data[i + 1]! + 0.114 * ref.data[i + 2]! >= 90) continue;
        n++;
        let diff = 0;
        for (let c = 0; c < 3; c++) diff = Math.max(diff, Math.abs(out.data[i + c]! - ref.data[i + c]!));
        if (diff <= 24) left++;
      }
    }
    // Measured: 21 of 57 dark pixels left as they were before (the hole), 0 after.
    expect(n).toBeGreaterThan(5);
    expect(left / n).toBeLessThan(0.1);
  });
});

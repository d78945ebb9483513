import { beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { chromium, type BrowserContext as Browser } from 'playwright-core';
import { cli } from './harness.js';
import { HtmlReport } from '../../src/cli/report.js';
import { fixture, tempDir, treeClip } from '../helpers.js';

/**
 * The report is checked in a real browser: Chromium from the distribution's packages
 * (`apt-get install chromium`), never a downloaded one. Missing locally, the test is skipped
 * with a message; under CI=true it is required.
 */
const CHROMIUM = process.env.IMGTOOL_CHROMIUM ?? '/usr/bin/chromium';
const haveChromium = existsSync(CHROMIUM);
const required = Boolean(process.env.CI) && process.env.CI !== 'false' && process.env.CI !== '0';
if (!haveChromium && !required) console.warn(`report.test.ts: skipped: no Chromium at ${CHROMIUM} (apt-get install chromium, or set IMGTOOL_CHROMIUM)`);

async function launch(): Promise<Browser> {
  if (!haveChromium) throw new Error(`CI=true needs Chromium at ${CHROMIUM}: apt-get install -y chromium`);
  // playwright passes --headless and --user-data-dir itself (from these arguments).
  return chromium.launchPersistentContext(tempDir('imgtool-chromium-'), {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1100, height: 800 },
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}

/** Opens the page, proves nothing was fetched from the network and every image decoded; returns a screenshot. */
async function open(browser: Browser, path: string) {
  const page = await browser.newPage();
  const fetched: string[] = [];
  page.on('request', (r) => {
    if (!/^(data:|file:)/.test(r.url())) fetched.push(r.url());
  });
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`file://${path}`, { waitUntil: 'load' });
  const images = await page.$$eval('img', (imgs) =>
    imgs.map((i) => ({ complete: (i as HTMLImageElement).complete, w: (i as HTMLImageElement).naturalWidth, src: (i as HTMLImageElement).src.slice(0, 16) })),
  );
  expect(fetched).toEqual([]);
  expect(errors).toEqual([]);
  for (const img of images) {
    expect(img.complete).toBe(true);
    expect(img.w).toBeGreaterThan(0);
    expect(img.src).toBe('data:image/webp;');
  }
  const shot = await page.screenshot({ fullPage: true });
  // Not blank: a page of thumbnails has plenty of contrast.
  const stats = await sharp(shot).stats();
  expect(Math.max(...stats.channels.slice(0, 3).map((c) => c.stdev))).toBeGreaterThan(20);
  return { page, images, shot };
}

const visibleStatuses = (page: import('playwright-core').Page) =>
  page.$$eval('tbody tr', (rows) => rows.filter((r) => !(r as HTMLElement).hidden).map((r) => r.getAttribute('data-status')));

describe.skipIf(!haveChromium && !required)('--report in Chromium', () => {
  beforeAll(() => {
    if (!haveChromium) throw new Error(`CI=true needs Chromium at ${CHROMIUM}: apt-get install -y chromium`);
  });

  it('a batch report: summary, thumbnails of cut-outs, an error row, and a working status filter', async () => {
    const cwd = tempDir();
    const home = tempDir();
    for (const n of ['orange', 'plant'])
      await sharp(fixture(`images/${n}.jpg`))
        .resize(192)
        .jpeg()
        .toFile(join(cwd, `${n}.jpg`));
    writeFileSync(join(cwd, 'broken.jpg'), 'not a jpeg');
    // One already done: reported as skipped with its existing output.
    await sharp(fixture('cutouts/apple.png')).toFile(join(cwd, 'apple.remove-background.png'));
    await sharp(fixture('cutouts/apple.png')).flatten({ background: '#ffffff' }).jpeg().toFile(join(cwd, 'apple.jpg'));
    const r = await cli(['remove-background', '.', '--report', 'report/run.html'], { cwd, home });
    expect(r.code).toBe(1);
    const path = join(cwd, 'report/run.html');
    const html = readFileSync(path, 'utf8');
    expect(html).not.toMatch(/(src|href)="https?:/);

    const browser = await launch();
    try {
      const { page, images } = await open(browser, path);
      // before + after for the two ok rows and the skipped one; the broken file has neither.
      expect(images).toHaveLength(6);
      expect(await page.textContent('h1')).toBe('imgtool remove-background');
      expect(await visibleStatuses(page)).toHaveLength(4);
      await page.click('button[data-filter="failed"]');
      expect(await visibleStatuses(page)).toEqual(['failed']);
      expect(await page.textContent('tr[data-status="failed"]')).toContain('invalid_image');
      await page.click('button[data-filter="ok"]');
      expect((await visibleStatuses(page)).sort()).toEqual(['ok', 'ok']);
      // The filter survives a reload (a watch report refreshes itself).
      await page.reload({ waitUntil: 'load' });
      expect((await visibleStatuses(page)).sort()).toEqual(['ok', 'ok']);
      await page.click('button[data-filter="all"]');
      expect(await visibleStatuses(page)).toHaveLength(4);
      // Cut-outs sit on the checkerboard; the credits card says what was charged.
      expect(await page.$$eval('img.cutout', (i) => i.length)).toBe(3);
      expect(await page.textContent('.cards')).toMatch(/credits\s*2/);
    } finally {
      await browser.close();
    }
  }, 180_000);

  it('videos show a poster frame that links to the file', async () => {
    const cwd = tempDir();
    const clip = join(cwd, 'clip.mp4');
    treeClip(clip, { seconds: 2 });
    const report = new HtmlReport('report.html', 'video-remove-background', cwd);
    report.add(
      { input: 'clip.mp4', output: join(cwd, 'clip.mp4'), status: 'ok', error_code: null, error: null, credits: 3, seconds: 12.5 },
      { refs: { video: { kind: 'file', path: clip, display: 'clip.mp4' } } },
    );
    await report.write(undefined);
    const browser = await launch();
    try {
      const { page, images } = await open(browser, join(cwd, 'report.html'));
      expect(images).toHaveLength(2);
      expect(await page.$$eval('a[title="open the video"]', (as) => as.map((a) => a.getAttribute('href')))).toEqual(['clip.mp4', 'clip.mp4']);
      expect(await page.textContent('.dims')).toContain('320×240');
    } finally {
      await browser.close();
    }
  }, 120_000);
});

import { randomUUID } from 'node:crypto';
import { mkdir, readFile, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, extname, join, relative, resolve } from 'node:path';
import sharp from 'sharp';
import writeFileAtomic from 'write-file-atomic';
import { ffmpegPath, runCapture } from '../media/ffmpeg.js';
import type { BatchTask } from './batch.js';
import { VIDEO_EXTENSIONS } from './inputs.js';
import type { BatchSummary, FileRecord } from './progress.js';

/**
 * `--report FILE.html`: one self-contained page per run. Thumbnails are inlined as data: URLs
 * and the styles and the status filter are in the page, so it opens from a mail attachment or
 * an artifact store with nothing fetched. Videos show a poster frame and link to the file.
 */

const THUMB = 160;

interface Thumb {
  src: string;
  video: boolean;
  /** The full picture's size, shown under the thumbnail (what upscale and outpaint change). */
  width?: number;
  height?: number;
}

interface Row {
  record: FileRecord;
  before?: Thumb;
  after?: Thumb;
  /** Links relative to the report, so the folder can be moved as a whole. */
  inputHref?: string;
  outputHref?: string;
}

const isVideo = (path: string) => VIDEO_EXTENSIONS.includes(extname(path).slice(1).toLowerCase()) && extname(path).toLowerCase() !== '.gif';

async function posterFrame(path: string): Promise<Buffer> {
  const tmp = join(tmpdir(), `imgtool-poster-${randomUUID()}.png`);
  try {
    // Half a second in skips black lead-in frames; -ss before -i seeks cheaply; short clips fall back to the first frame.
    for (const at of ['0.5', '0']) {
      const r = await runCapture(ffmpegPath(), ['-v', 'error', '-y', '-ss', at, '-i', path, '-frames:v', '1', tmp]);
      if (r.code === 0) {
        const png = await readFile(tmp).catch(() => undefined);
        if (png?.length) return png;
      }
    }
    throw new Error(`no frame could be read from ${path}`);
  } finally {
    await unlink(tmp).catch(() => {});
  }
}

/** A small WebP (alpha kept, so cut-outs show over the page's checkerboard), or undefined if it cannot be decoded. */
export async function thumbnail(path: string): Promise<Thumb | undefined> {
  try {
    const video = isVideo(path);
    const source = video ? await posterFrame(path) : path;
    const meta = await sharp(source, { animated: false }).metadata();
    const buf = await sharp(source, { animated: false })
      .rotate()
      .resize(THUMB, THUMB, { fit: 'inside', withoutEnlargement: true })
      .webp({ quality: 75, alphaQuality: 90 })
      .toBuffer();
    const turned = (meta.orientation ?? 1) >= 5;
    return {
      src: `data:image/webp;base64,${buf.toString('base64')}`,
      video,
      width: turned ? meta.height : meta.width,
      height: turned ? meta.width : meta.height,
    };
  } catch {
    return undefined;
  }
}

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
const STATUSES = ['ok', 'failed', 'skipped', 'cancelled', 'submitted'] as const;

function secs(s: number): string {
  return s < 10 ? `${s.toFixed(1)} s` : s < 120 ? `${Math.round(s)} s` : `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
}

export class HtmlReport {
  private readonly rows: Row[] = [];
  private readonly pending = new Set<Promise<void>>();
  private readonly started = new Date();
  readonly path: string;

  constructor(
    path: string,
    private readonly operation: string,
    private readonly cwd: string,
  ) {
    this.path = resolve(cwd, path);
  }

  private href(abs: string): string {
    return relative(dirname(this.path), abs).split('\\').join('/').split('/').map(encodeURIComponent).join('/');
  }

  /** Queues a record; its thumbnails are made in the background (await `settled()` before writing). */
  add(record: FileRecord, task: BatchTask): void {
    const row: Row = { record };
    this.rows.push(row);
    const job = (async () => {
      const first = Object.values(task.refs)[0];
      if (first?.kind === 'file') {
        row.before = await thumbnail(first.path);
        row.inputHref = this.href(first.path);
      }
      if (record.output && record.output !== '-') {
        const out = resolve(this.cwd, record.output);
        row.after = await thumbnail(out);
        row.outputHref = this.href(out);
      }
    })();
    this.pending.add(job);
    void job.finally(() => this.pending.delete(job));
  }

  async settled(): Promise<void> {
    while (this.pending.size) await Promise.all([...this.pending]);
  }

  /** Writes the page atomically; `live` marks a watch report that is still being updated. */
  async write(summary: BatchSummary | undefined, opts: { live?: boolean } = {}): Promise<void> {
    await this.settled();
    await mkdir(dirname(this.path), { recursive: true });
    await writeFileAtomic(this.path, this.html(summary, opts.live ?? false));
  }

  html(summary: BatchSummary | undefined, live: boolean): string {
    const rows = this.rows;
    const count = (s: string) => rows.filter((r) => r.record.status === s).length;
    const credits = summary?.credits ?? rows.reduce((a, r) => a + (r.record.status === 'ok' ? r.record.credits : 0), 0);
    const seconds = summary?.seconds ?? (Date.now() - this.started.getTime()) / 1000;
    const title = `imgtool ${this.operation}: ${this.started.toISOString().replace('T', ' ').slice(0, 19)} UTC`;
    const present = STATUSES.filter((s) => count(s) > 0);
    const filters = [`<button type="button" data-filter="all" aria-pressed="true">all <b>${rows.length}</b></button>`]
      .concat(present.map((s) => `<button type="button" data-filter="${s}" class="st-${s}" aria-pressed="false">${s} <b>${count(s)}</b></button>`))
      .join('');
    const cell = (t: Thumb | undefined, href: string | undefined, cutout: boolean) => {
      if (!t) return `<td class="thumb"><span class="none">no preview</span></td>`;
      const img = `<img src="${t.src}" alt="" loading="eager"${cutout ? ' class="cutout"' : ''}>`;
      const body =
        t.video && href
          ? `<a href="${href}" title="open the video">${img}<span class="play">&#9654; video</span></a>`
          : href
            ? `<a href="${href}">${img}</a>`
            : img;
      const dims = t.width && t.height ? `<div class="dims">${t.width}&times;${t.height}</div>` : '';
      return `<td class="thumb">${body}${dims}</td>`;
    };
    const body = rows
      .map(({ record: r, before, after, inputHref, outputHref }) => {
        const err = r.error ? `<div class="err"><code>${esc(r.error_code ?? '')}</code> ${esc(r.error)}</div>` : '';
        const note =
          r.status === 'skipped'
            ? `<div class="note">${r.skip_reason === 'claimed' ? 'processed by another imgtool run' : 'output already existed'}</div>`
            : '';
        return `<tr data-status="${r.status}">${cell(before, inputHref, false)}${cell(after, outputHref, true)}<td class="name"><div>${esc(r.input)}</div>${r.output && r.output !== '-' ? `<div class="out">&rarr; ${esc(relative(this.cwd, r.output) || r.output)}</div>` : ''}${err}${note}</td><td><span class="badge st-${r.status}">${r.status}</span></td><td class="num">${r.credits}</td><td class="num">${r.seconds ? secs(r.seconds) : ''}</td></tr>`;
      })
      .join('\n');
    const exit = summary ? ` &middot; exit code ${summary.exitCode}` : '';
    return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
${live ? '<meta http-equiv="refresh" content="5">' : ''}
<title>${esc(title)}</title>
<style>
:root{font:14px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1d2330;background:#f6f7f9}
body{margin:24px auto;max-width:1100px;padding:0 16px}
h1{font-size:20px;margin:0 0 4px}
.sub{color:#5b6475;margin-bottom:16px}
.cards{display:flex;gap:12px;flex-wrap:wrap;margin-bottom:16px}
.card{background:#fff;border:1px solid #dde1e8;border-radius:8px;padding:10px 16px;min-width:90px}
.card b{display:block;font-size:22px}
.filters{margin:8px 0 12px;display:flex;gap:6px;flex-wrap:wrap}
.filters button{border:1px solid #c8ced9;background:#fff;border-radius:16px;padding:4px 12px;cursor:pointer;font:inherit}
.filters button[aria-pressed=true]{background:#1d2330;color:#fff;border-color:#1d2330}
table{width:100%;border-collapse:collapse;background:#fff;border:1px solid #dde1e8;border-radius:8px}
th,td{padding:8px;border-bottom:1px solid #eceff3;text-align:left;vertical-align:middle}
th{font-weight:600;color:#5b6475;font-size:12px;text-transform:uppercase}
td.thumb{width:${THUMB}px;height:${THUMB / 2}px;text-align:center}
td.thumb img{max-width:${THUMB}px;max-height:${THUMB}px;display:block;margin:auto;border-radius:4px}
td.thumb a{position:relative;display:inline-block}
img.cutout{background-color:#fff;background-image:linear-gradient(45deg,#d5d9e0 25%,transparent 25%,transparent 75%,#d5d9e0 75%),linear-gradient(45deg,#d5d9e0 25%,transparent 25%,transparent 75%,#d5d9e0 75%);background-size:16px 16px;background-position:0 0,8px 8px}
.play{position:absolute;left:4px;bottom:4px;background:rgba(0,0,0,.65);color:#fff;font-size:11px;padding:1px 6px;border-radius:3px}
.none{color:#98a0ad;font-size:12px}
.dims{color:#98a0ad;font-size:11px;margin-top:2px}
td.name{overflow-wrap:anywhere}
.out{color:#5b6475;font-size:12px}
.err{color:#a4161a;margin-top:4px}
.err code{background:#fde8e8;padding:0 4px;border-radius:3px}
.note{color:#5b6475;font-size:12px}
td.num{text-align:right;white-space:nowrap}
.badge{display:inline-block;border-radius:10px;padding:1px 8px;font-size:12px;font-weight:600}
.st-ok{background:#e3f5e8;color:#17662c}.st-failed{background:#fde8e8;color:#a4161a}.st-skipped{background:#eef0f4;color:#4a5261}.st-cancelled{background:#fff3d6;color:#7a5300}.st-submitted{background:#e5efff;color:#1a4fa0}
tr[hidden]{display:none}
</style></head><body>
<h1>imgtool ${esc(this.operation)}</h1>
<div class="sub">${esc(this.started.toISOString().replace('T', ' ').slice(0, 19))} UTC${exit}${live ? ' &middot; watching: this page refreshes every 5 s' : ''}</div>
<div class="cards">
<div class="card">inputs<b id="total">${rows.length}</b></div>
<div class="card">ok<b>${count('ok')}</b></div>
<div class="card">failed<b>${count('failed')}</b></div>
<div class="card">skipped<b>${count('skipped')}</b></div>
${count('cancelled') ? `<div class="card">cancelled<b>${count('cancelled')}</b></div>` : ''}
<div class="card">credits<b>${credits}</b></div>
<div class="card">time<b>${secs(seconds)}</b></div>
</div>
<div class="filters" role="group" aria-label="filter by status">${filters}</div>
<table><thead><tr><th>before</th><th>after</th><th>input</th><th>status</th><th>credits</th><th>time</th></tr></thead>
<tbody>
${body}
</tbody></table>
<script>
// The filter is kept in the URL's #hash, so a watch report's reload keeps it.
(function(){var bs=document.querySelectorAll('[data-filter]');function show(f){var hit=false;bs.forEach(function(x){var on=x.getAttribute('data-filter')===f;hit=hit||on;x.setAttribute('aria-pressed',String(on))});if(!hit)return show('all');document.querySelectorAll('tbody tr').forEach(function(r){r.hidden=f!=='all'&&r.getAttribute('data-status')!==f})}bs.forEach(function(b){b.addEventListener('click',function(){var f=b.getAttribute('data-filter');history.replaceState(null,'',f==='all'?location.pathname:'#'+f);show(f)})});show(location.hash.slice(1)||'all')})();
</script>
</body></html>
`;
  }
}

// Soak test of `imgtool serve`: the real CLI server as a child process, fed mixed operations
// (every image operation, try-on, and both async video operations) back to back for --minutes,
// while /health is probed every second. Prints the server's RSS over time and /health latency,
// and exits 1 if RSS ever passes --ceiling-mb or /health p99 passes --health-ms.
//
// Usage: npm run build && node bench/soak.mjs [--minutes 20] [--ceiling-mb 3072] [--health-ms 500]
//        [--concurrency 1] [--clients 1] [--recycle-rss 2048] [--recycle-after 200] [--recycle-idle 30]
//        [--no-recycle]
//        [--fixtures DIR]
// --no-recycle runs the same load with pipeline-thread recycling off (the before picture).
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createRequire } from 'node:module';
import sharp from 'sharp';
import { FIXTURES } from './fixtures.mjs';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const MINUTES = arg('minutes', 20);
const CEILING_MB = arg('ceiling-mb', 3072);
const HEALTH_MS = arg('health-ms', 500);
const CONCURRENCY = arg('concurrency', 1);
const CLIENTS = arg('clients', 1);
const NO_RECYCLE = process.argv.includes('--no-recycle');
const RECYCLE_RSS = NO_RECYCLE ? 0 : arg('recycle-rss', 2048);
const RECYCLE_AFTER = NO_RECYCLE ? 0 : arg('recycle-after', 200);
const RECYCLE_IDLE = NO_RECYCLE ? 0 : arg('recycle-idle', 30);

const root = resolve(import.meta.dirname, '..');
const cli = join(root, 'bin/imgtool.js');
const dataDir = mkdtempSync(join(tmpdir(), 'imgtool-soak-'));

// Inputs: small real photos (the soak is about memory over time, not per-image speed).
const jpeg = async (file, side) => sharp(join(FIXTURES, file)).resize(side, side, { fit: 'inside' }).jpeg().toBuffer();
const png = async (file, side) => sharp(join(FIXTURES, file)).resize(side, side, { fit: 'inside' }).png().toBuffer();
const photo = await jpeg('images/fruits.jpg', 384);
const portrait = await jpeg('images/grace_hopper.jpg', 384);
const product = await png('cutouts/handbag.png', 256);
const garment = await png('cutouts/tshirt.png', 256);
const ffmpeg = createRequire(import.meta.url)('@ffmpeg-installer/ffmpeg').path;
const clip = join(dataDir, 'clip.mp4');
execFileSync(ffmpeg, ['-v', 'error', '-y', '-i', join(FIXTURES, 'video/tree.avi'), '-t', '2', '-an', '-c:v', 'libx264', '-pix_fmt', 'yuv420p', clip]);
const video = readFileSync(clip);

const key = JSON.parse(
  execFileSync(process.execPath, [cli, 'serve', 'keys', 'create', '--data-dir', dataDir, '--credits', '100000000', '--json'], { encoding: 'utf8' }),
).key;

const server = spawn(
  process.execPath,
  [
    cli,
    'serve',
    '--port',
    '0',
    '--data-dir',
    dataDir,
    '--rate-limit',
    '0',
    '--concurrency',
    String(CONCURRENCY),
    '--recycle-rss',
    String(RECYCLE_RSS),
    '--recycle-after',
    String(RECYCLE_AFTER),
    '--recycle-idle',
    String(RECYCLE_IDLE),
    '--log',
    'warn',
  ],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
const url = await new Promise((res, rej) => {
  let out = '';
  server.stdout.on('data', (d) => {
    out += d;
    const m = /listening on (\S+)/.exec(out);
    if (m) res(m[1]);
  });
  server.once('exit', (code) => rej(new Error(`server exited (${code}) before listening`)));
});
server.stdout.resume();

// Control in the same run: a bare Node HTTP server in its own process, probed at the same moments.
// When its latency spikes too, the machine (other processes on shared cores) is the cause, not imgtool.
const bare = spawn(
  process.execPath,
  ['-e', "require('http').createServer((q, s) => s.end('{\"status\":\"ok\"}')).listen(0, '127.0.0.1', function () { console.log(this.address().port) })"],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
const bareUrl = await new Promise((res) => bare.stdout.once('data', (d) => res(`http://127.0.0.1:${String(d).trim()}`)));

const rssMb = () => {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${server.pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : NaN;
  } catch {
    return NaN;
  }
};

const form = (fields, files) => {
  const f = new FormData();
  for (const [k, v] of Object.entries(fields)) f.append(k, typeof v === 'string' ? v : JSON.stringify(v));
  for (const [k, [buf, name, type]] of Object.entries(files)) f.append(k, new Blob([buf], { type }), name);
  return f;
};
const post = (path, body) => fetch(url + path, { method: 'POST', headers: { 'x-api-key': key }, body });

async function waitJob(location) {
  for (const until = Date.now() + 15 * 60_000; Date.now() < until; ) {
    await new Promise((r) => setTimeout(r, 1000));
    const j = await (await fetch(url + location, { headers: { 'x-api-key': key } })).json();
    if (j.status === 'completed') return;
    if (j.status === 'failed') throw new Error(`${location} failed: ${JSON.stringify(j.error)}`);
    if (!j.status) throw new Error(`${location}: ${JSON.stringify(j)}`);
  }
  throw new Error(`${location} still unfinished after 15 min`);
}

const img = (buf, name) => [buf, name, name.endsWith('.png') ? 'image/png' : 'image/jpeg'];
const OPS = [
  ['remove-background', () => post('/v1/remove-background', form({}, { image: img(photo, 'fruits.jpg') }))],
  ['upscale', () => post('/v1/upscale', form({ scale: '2', model: 'slim' }, { image: img(photo, 'fruits.jpg') }))],
  ['generate-background', () => post('/v1/generate-background', form({ scene: 'marble' }, { image: img(product, 'handbag.png') }))],
  ['outpaint', () => post('/v1/outpaint', form({ left: '96', right: '96' }, { image: img(photo, 'fruits.jpg') }))],
  ['try-on', () => post('/v1/try-on', form({}, { person_image: img(portrait, 'person.jpg'), garment_image: img(garment, 'tshirt.png') }))],
  ['upscale x4 medium', () => post('/v1/upscale', form({ scale: '4', model: 'medium' }, { image: img(product, 'handbag.png') }))],
  ['video-remove-background', () => post('/v1/video/remove-background', form({}, { video: [video, 'clip.mp4', 'video/mp4'] }))],
  ['video-loop', () => post('/v1/video/loop', form({ duration: '5', resolution: '480p' }, { image: img(photo, 'fruits.jpg') }))],
];

const started = Date.now();
const deadline = started + MINUTES * 60_000;
const stats = new Map(OPS.map(([name]) => [name, { ok: 0, failed: 0, ms: 0 }]));
const errors = [];
let window = { start: started, done: 0, failed: 0, health: [], bare: [], rssMax: 0 };
const rows = [];
let peakRss = 0;
const allHealth = [];
const allBare = [];

const pct = (a, p) => (a.length ? [...a].sort((x, y) => x - y)[Math.min(a.length - 1, Math.floor(a.length * p))] : NaN);

function closeWindow() {
  const rss = rssMb();
  rows.push({
    minute: Math.round((Date.now() - started) / 60_000),
    'ops done': window.done,
    failed: window.failed,
    'RSS MB (now)': rss,
    'RSS MB (max in window)': Math.max(window.rssMax, rss),
    'health p50 ms': Math.round(pct(window.health, 0.5)),
    'health p99 ms': Math.round(pct(window.health, 0.99)),
    'health max ms': Math.round(Math.max(...window.health, 0)),
    'bare server p99 ms': Math.round(pct(window.bare, 0.99)),
    'bare server max ms': Math.round(Math.max(...window.bare, 0)),
  });
  console.log(JSON.stringify(rows.at(-1)));
  window = { start: Date.now(), done: 0, failed: 0, health: [], bare: [], rssMax: 0 };
}

// /health every second and RSS every 2 s, from this process, for the whole run.
const probe = async (target, into, all) => {
  const t = performance.now();
  try {
    const r = await fetch(target);
    await r.json();
  } catch {
    into.push(10_000);
    all.push(10_000);
    return;
  }
  const ms = performance.now() - t;
  into.push(ms);
  all.push(ms);
};
const healthTimer = setInterval(() => {
  probe(`${url}/health`, window.health, allHealth);
  probe(bareUrl, window.bare, allBare);
}, 1000);
const rssTimer = setInterval(() => {
  const r = rssMb();
  window.rssMax = Math.max(window.rssMax, r);
  peakRss = Math.max(peakRss, r);
}, 2000);
const windowTimer = setInterval(closeWindow, 60_000);

async function client(offset) {
  for (let i = offset; Date.now() < deadline; i++) {
    const [name, send] = OPS[i % OPS.length];
    const t = Date.now();
    const s = stats.get(name);
    try {
      const res = await send();
      const body = await res.json();
      if (res.status === 202) await waitJob(res.headers.get('location'));
      else if (res.status !== 200) throw new Error(`${name}: HTTP ${res.status} ${body.error_code}: ${body.error}`);
      s.ok++;
      window.done++;
    } catch (err) {
      s.failed++;
      window.failed++;
      if (errors.length < 20) errors.push(err.message);
    }
    s.ms += Date.now() - t;
  }
}

console.log(
  `soak: ${MINUTES} min, server pid ${server.pid} at ${url}, concurrency ${CONCURRENCY}, ${CLIENTS} client(s), recycle ${NO_RECYCLE ? 'off' : `rss>${RECYCLE_RSS} MB, ${RECYCLE_AFTER} jobs or ${RECYCLE_IDLE} s idle`}, ceiling ${CEILING_MB} MB, /health p99 <= ${HEALTH_MS} ms`,
);
console.log(`RSS at start: ${rssMb()} MB`);
await Promise.all(Array.from({ length: CLIENTS }, (_, i) => client(i * 3)));
clearInterval(windowTimer);
clearInterval(healthTimer);
clearInterval(rssTimer);
closeWindow();
// Idle for a while: a server that gives memory back should drop after the last job.
await new Promise((r) => setTimeout(r, 10_000));
const idleRss = rssMb();
const idleWait = RECYCLE_IDLE + 15;
await new Promise((r) => setTimeout(r, idleWait * 1000 - 10_000));
const quietRss = rssMb();
server.kill('SIGTERM');
bare.kill();
await new Promise((r) => server.once('exit', r));
rmSync(dataDir, { recursive: true, force: true });

console.log('\nRSS over time (MB) and /health latency, per minute:');
console.table(rows);
console.table(
  [...stats].map(([op, s]) => ({ op, ok: s.ok, failed: s.failed, 'mean s': s.ok + s.failed ? Math.round(s.ms / (s.ok + s.failed) / 100) / 10 : 0 })),
);
if (errors.length) console.log('first errors:\n  ' + errors.join('\n  '));
const p99 = pct(allHealth, 0.99);
console.log(
  `control: bare Node server in the same run, p50 ${Math.round(pct(allBare, 0.5))} ms, p99 ${Math.round(pct(allBare, 0.99))} ms, max ${Math.round(Math.max(...allBare))} ms`,
);
console.log(
  `peak RSS ${peakRss} MB (ceiling ${CEILING_MB} MB); RSS 10 s after the last job ${idleRss} MB, ${idleWait} s after ${quietRss} MB; /health p50 ${Math.round(pct(allHealth, 0.5))} ms, p99 ${Math.round(p99)} ms, max ${Math.round(Math.max(...allHealth))} ms over ${allHealth.length} probes`,
);
const failedOps = [...stats.values()].reduce((a, s) => a + s.failed, 0);
const pass = peakRss <= CEILING_MB && p99 <= HEALTH_MS && failedOps === 0;
console.log(
  pass
    ? 'PASS'
    : `FAIL:${peakRss > CEILING_MB ? ' RSS over the ceiling;' : ''}${p99 > HEALTH_MS ? ' /health too slow;' : ''}${failedOps ? ` ${failedOps} operations failed;` : ''}`,
);
process.exit(pass ? 0 : 1);

// Load test of `imgtool serve` on loopback (bounded: 50 connections x 30 s on GET /v1/credits,
// a rate-limited run, then a mixed run with real remove-background requests), reporting
// throughput, p99 latency, errors and a reconciliation of the credits ledger.
// Also: replays of an Idempotency-Key (the recorded response, never re-run or re-charged) and
// `ledger verify` (src/server/ledger-verify.ts) after every run that spends credits.
// Usage: npm run build && node bench/serve.mjs [--seconds 30] [--posts 12]
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import sharp from 'sharp';
import Fastify from 'fastify';
import { buildServer } from '../dist/server/app.js';
import { verifyLedger } from '../dist/server/ledger-verify.js';
import { FIXTURES } from './fixtures.mjs';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const SECONDS = arg('seconds', 30);
const POSTS = arg('posts', 12);

function run(opts) {
  return new Promise((resolve, reject) => {
    const inst = autocannon(opts, (err, res) => (err ? reject(err) : resolve(res)));
    autocannon.track(inst, { renderProgressBar: false, renderResultsTable: false, renderLatencyTable: false, outputStream: { write() {} } });
  });
}

async function server(opts) {
  const dataDir = mkdtempSync(join(tmpdir(), 'imgtool-bench-'));
  const app = await buildServer({ dataDir, sweepIntervalMs: 0, ...opts });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, url, dataDir };
}

const rows = [];
function row(name, r, extra = {}) {
  const non2xx = r.non2xx - (extra.r429 ?? 0);
  rows.push({
    run: name,
    'req/s': Math.round(r.requests.average),
    requests: r.requests.total,
    '2xx': r['2xx'],
    429: extra.r429 ?? 0,
    'errors (other)': r.errors + r.timeouts + non2xx,
    'p50 ms': r.latency.p50,
    'p99 ms': r.latency.p99,
    ...extra.more,
  });
}

// 1. Raw throughput of an authenticated read: one key, limiter off.
{
  const s = await server({ rateLimit: false });
  const { key } = await s.app.imgtool.keys.createKey({ scopes: ['imaging:read'], credits: 1000 });
  const r = await run({ url: `${s.url}/v1/credits`, connections: 50, duration: SECONDS, headers: { 'x-api-key': key } });
  row(`GET /v1/credits, 50 conns x ${SECONDS}s, limiter off`, r);
  await s.app.close();
  rmSync(s.dataDir, { recursive: true, force: true });
  // Baseline in the same run: a bare fastify JSON route (no auth, no store), same settings.
  const bare = Fastify();
  bare.get('/credits', async () => ({ credits_remaining: 1000 }));
  const bareUrl = await bare.listen({ port: 0, host: '127.0.0.1' });
  row(`baseline: bare fastify GET, 50 conns x ${SECONDS}s`, await run({ url: `${bareUrl}/credits`, connections: 50, duration: SECONDS }));
  await bare.close();
}

// 2. The per-credential limiter (default 5 req/s): 50 connections, each with its own key.
{
  const s = await server({});
  const keys = [];
  for (let i = 0; i < 50; i++) keys.push((await s.app.imgtool.keys.createKey({ scopes: ['imaging:read'], credits: 0 })).key);
  let next = 0;
  const secs = 10;
  const r = await run({
    url: `${s.url}/v1/credits`,
    connections: 50,
    duration: secs,
    requests: [
      {
        setupRequest: (req, ctx) => {
          ctx.key ??= keys[next++ % keys.length];
          return { ...req, headers: { ...req.headers, 'x-api-key': ctx.key } };
        },
      },
    ],
  });
  const r429 = r.statusCodeStats?.['429']?.count ?? 0;
  row(`GET /v1/credits, 50 keys x 5 req/s limit, ${secs}s`, r, { r429, more: { 'allowed/s (expect <= 250)': Math.round(r['2xx'] / secs) } });
  await s.app.close();
  rmSync(s.dataDir, { recursive: true, force: true });
}

// 3. Mixed: a fixed number of real remove-background POSTs while health and credit reads keep
//    flowing; once with pipelines on worker threads (the default) and once inline on the main
//    thread (the baseline), to show what the threads buy the event loop.
function start(opts) {
  const inst = autocannon(opts);
  autocannon.track(inst, { renderProgressBar: false, renderResultsTable: false, renderLatencyTable: false, outputStream: { write() {} } });
  const done = new Promise((resolve) => inst.on('done', resolve));
  return {
    stop: () => {
      inst.stop();
      return done;
    },
  };
}
const recon = [];
for (const isolation of ['threads', 'inline']) {
  const s = await server({ rateLimit: false, isolation });
  const START = 100000;
  const { key, record } = await s.app.imgtool.keys.createKey({ scopes: ['imaging:read', 'imaging:write'], credits: START });
  const img = await sharp(join(FIXTURES, 'images/fruits.jpg')).resize(256, 256).jpeg().toBuffer();
  const body = JSON.stringify({ image: img.toString('base64'), model: 'u2netp' });
  const health = start({ url: `${s.url}/health`, connections: 5, duration: 600 });
  const reads = start({ url: `${s.url}/v1/credits`, connections: 5, duration: 600, headers: { 'x-api-key': key } });
  const post = await run({
    url: `${s.url}/v1/remove-background`,
    method: 'POST',
    connections: 4,
    amount: POSTS,
    timeout: 120,
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body,
  });
  const [h, r] = await Promise.all([health.stop(), reads.stop()]);
  const balance = await s.app.imgtool.keys.balance(record.id);
  const ledger = readFileSync(s.app.imgtool.keys.ledgerFile, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l))
    .filter((e) => e.account === record.id);
  const charges = ledger.filter((e) => e.reason === 'charge').length;
  const spentByLedger = -ledger.filter((e) => e.reason !== 'grant').reduce((a, e) => a + e.delta, 0);
  row(`[${isolation}] POST /v1/remove-background (real, 256 px), 4 conns, ${POSTS} reqs`, post);
  row(`[${isolation}]   meanwhile GET /health, 5 conns`, h);
  row(`[${isolation}]   meanwhile GET /v1/credits, 5 conns`, r);
  recon.push({
    isolation,
    'successful POSTs (2xx)': post['2xx'],
    'ledger charge entries': charges,
    'credits spent (start - balance)': START - balance,
    'spent per ledger.jsonl': spentByLedger,
    'open holds': Object.keys(JSON.parse(readFileSync(s.app.imgtool.keys.file, 'utf8')).holds).length,
    reconciles: post['2xx'] === charges && START - balance === charges && spentByLedger === charges ? 'yes' : 'NO',
    'ledger verify': (await verifyLedger(s.dataDir)).ok ? 'ok' : 'FAILED',
  });
  await s.app.close();
  rmSync(s.dataDir, { recursive: true, force: true });
}
// 4. Idempotency-Key replays: one real remove-background POST, then the same key repeated by 5
//    connections; every repeat must be the recorded answer, charged once in total.
{
  const s = await server({ rateLimit: false });
  const START = 1000;
  const { key, record } = await s.app.imgtool.keys.createKey({ scopes: ['imaging:read', 'imaging:write'], credits: START });
  const img = await sharp(join(FIXTURES, 'images/fruits.jpg')).resize(256, 256).jpeg().toBuffer();
  const body = JSON.stringify({ image: img.toString('base64'), model: 'u2netp' });
  const headers = { 'x-api-key': key, 'content-type': 'application/json', 'idempotency-key': 'bench-replay-1' };
  const first = await fetch(`${s.url}/v1/remove-background`, { method: 'POST', headers, body });
  await first.arrayBuffer();
  const secs = Math.min(10, SECONDS);
  const r = await run({ url: `${s.url}/v1/remove-background`, method: 'POST', connections: 5, duration: secs, headers, body });
  row(`POST /v1/remove-background, same Idempotency-Key replayed, 5 conns x ${secs}s`, r, {
    more: { 'charged in total': START - (await s.app.imgtool.keys.balance(record.id)) },
  });
  recon.push({
    isolation: 'idempotent replays',
    'successful POSTs (2xx)': r['2xx'] + 1,
    'ledger charge entries': readFileSync(s.app.imgtool.keys.ledgerFile, 'utf8')
      .split('\n')
      .filter((l) => l.includes('"reason":"charge"')).length,
    'credits spent (start - balance)': START - (await s.app.imgtool.keys.balance(record.id)),
    'ledger verify': (await verifyLedger(s.dataDir)).ok ? 'ok' : 'FAILED',
  });
  await s.app.close();
  rmSync(s.dataDir, { recursive: true, force: true });
}

console.log('\nLedger reconciliation (mixed runs; remove-background costs 1 credit):');
console.table(recon);

console.log('\nimgtool serve on 127.0.0.1 (autocannon; CPU shared with other work, figures are indicative):');
console.table(rows);

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import sharp from 'sharp';
import { cli, type CliRun } from '../cli/harness.js';
import { fixture, tempDir } from '../helpers.js';

/** Shared pieces of the end-to-end tests: the CLI pointed at a server, a capturing proxy, images, a child server. */

export const BIN = resolve(__dirname, '../../bin/imgtool.js');

/** Runs the CLI in-process in remote mode (URL and key through the environment, as a user would). */
export function remote(url: string, key: string, args: string[], opts: { cwd?: string; signal?: AbortSignal; env?: NodeJS.ProcessEnv } = {}): Promise<CliRun> {
  return cli(args, { cwd: opts.cwd, signal: opts.signal, env: { IMGTOOL_API_URL: url, IMGTOOL_API_KEY: key, ...opts.env } });
}

export interface Captured {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  status?: number;
}

/**
 * A logging HTTP proxy in front of a server: records every request (method, URL, headers, body)
 * and its status, so tests can see exactly what the client put on the wire. The Host header is
 * passed through, so result links the server builds point back at the proxy.
 */
export async function startProxy(
  upstream: string,
  opts: { hideOpenApi?: boolean } = {},
): Promise<{ url: string; log: Captured[]; close: () => Promise<void> }> {
  const target = new URL(upstream);
  const log: Captured[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const entry: Captured = { method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks) };
      log.push(entry);
      if (opts.hideOpenApi && req.url === '/openapi.json') {
        entry.status = 404;
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"no such route","error_code":"not_found"}');
        return;
      }
      const up = request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (r) => {
        entry.status = r.statusCode;
        res.writeHead(r.statusCode!, r.headers);
        r.pipe(res);
      });
      up.on('error', () => res.writeHead(502).end());
      up.end(entry.body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, log, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/** Every place a secret could leak in a captured request, apart from the one header that must carry it. */
export function leaksOf(log: Captured[], secret: string): string[] {
  const found: string[] = [];
  for (const e of log) {
    if (e.url.includes(secret)) found.push(`${e.method} ${e.url}: in the URL`);
    if (e.body.includes(secret)) found.push(`${e.method} ${e.url}: in the body`);
    for (const [name, value] of Object.entries(e.headers)) {
      if (name === 'x-api-key') continue;
      if (String(value).includes(secret)) found.push(`${e.method} ${e.url}: in header ${name}`);
    }
  }
  return found;
}

/** A small photo-like image written to `dir/name` (a fixture cropped and resized). */
export async function writeImage(dir: string, name: string, source: string, width: number, height = width): Promise<string> {
  const path = join(dir, name);
  let s = sharp(fixture(source)).resize(width, height, { fit: 'cover' });
  s = name.endsWith('.png') ? s.png() : s.jpeg({ quality: 92 });
  await s.toFile(path);
  return path;
}

/** Mean absolute difference per channel (0..255) between two images of the same size. */
export async function meanAbsDiff(a: string | Buffer, b: string | Buffer): Promise<number> {
  const [ra, rb] = await Promise.all([sharp(a).raw().toBuffer({ resolveWithObject: true }), sharp(b).raw().toBuffer({ resolveWithObject: true })]);
  if (ra.info.width !== rb.info.width || ra.info.height !== rb.info.height || ra.info.channels !== rb.info.channels) {
    throw new Error(`different shapes: ${ra.info.width}x${ra.info.height}x${ra.info.channels} vs ${rb.info.width}x${rb.info.height}x${rb.info.channels}`);
  }
  let sum = 0;
  for (let i = 0; i < ra.data.length; i++) sum += Math.abs(ra.data[i]! - rb.data[i]!);
  return sum / ra.data.length;
}

/** `imgtool serve` as a child process of the built CLI, for tests that kill it. */
export interface ChildServer {
  url: string;
  child: ChildProcess;
  output: () => string;
  stop: (signal?: NodeJS.Signals) => Promise<void>;
}

export function builtCliAvailable(): boolean {
  return existsSync(resolve(__dirname, '../../dist/cli/main.js'));
}

export async function startChildServer(dataDir: string, extra: string[] = []): Promise<ChildServer> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--data-dir', dataDir, '--concurrency', '1', ...extra], {
    env: { ...process.env, IMGTOOL_HOME: tempDir('imgtool-home-') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const url = await new Promise<string>((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`imgtool serve did not start:\n${out}`)), 30_000);
    const check = () => {
      const m = /listening on (http:\/\/[^\s]+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        ok(m[1]!);
      }
    };
    child.stdout!.on('data', check);
    child.once('exit', (code) => fail(new Error(`imgtool serve exited with ${code}:\n${out}`)));
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return {
    url,
    child,
    output: () => out,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}

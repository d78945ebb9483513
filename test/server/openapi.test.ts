import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import SwaggerParser from '@apidevtools/swagger-parser';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { tempDir } from '../helpers.js';
import { startHarness, type Harness } from './harness.js';

/**
 * The OpenAPI document a real `imgtool serve` process serves, checked by two independent tools
 * (Redocly's linter with its recommended rules, and swagger-parser's schema validation), and
 * compared with the routes the app really answers, so a route cannot go undocumented.
 */

const run = promisify(execFile);
const redocly = join(dirname(createRequire(import.meta.url).resolve('@redocly/cli/package.json')), 'bin/cli.js');

const BIN = resolve(__dirname, '../../bin/imgtool.js');

let h: Harness;
let serve: ChildProcess | undefined;
let doc: { paths: Record<string, Record<string, unknown>> } & Record<string, unknown>;

/** Starts `imgtool serve` on a free port and returns its URL from the banner line. */
function startServe(): Promise<string> {
  serve = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--data-dir', tempDir('imgtool-openapi-serve-'), '--log', 'silent'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((res, rej) => {
    let out = '';
    serve!.stdout!.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) res(m[1]!);
    });
    serve!.once('exit', (code) => rej(new Error(`imgtool serve exited with ${code}: ${out}`)));
  });
}

beforeAll(async () => {
  const url = await startServe();
  const res = await fetch(`${url}/openapi.json`);
  expect(res.status).toBe(200);
  doc = (await res.json()) as typeof doc;
  // The in-process app (for route inspection) serves the same document.
  h = await startHarness();
  expect(await (await h.call('GET', '/openapi.json', { key: null })).json()).toEqual(doc);
}, 60_000);
afterAll(async () => {
  serve?.kill('SIGTERM');
  await h?.close();
});

/** Full paths from fastify's route tree ("│   └── /job/:jobId (GET, ...)" lines nest under their parent). */
function routePaths(tree: string): string[] {
  const stack: string[] = [];
  const out: string[] = [];
  for (const line of tree.split('\n')) {
    const m = /^([│ ]*)[├└]── (\S+) \(/.exec(line);
    if (!m) continue;
    const depth = m[1]!.length / 4;
    stack.length = depth;
    stack.push(m[2]!);
    out.push(stack.join(''));
  }
  return out;
}

describe('OpenAPI document served by imgtool serve', () => {
  test('redocly lint (recommended rules): no errors, no warnings', async () => {
    const file = join(tempDir('imgtool-openapi-'), 'openapi.json');
    writeFileSync(file, JSON.stringify(doc));
    // Telemetry and the update check would reach the network; tests stay offline.
    const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' };
    const { stdout } = await run(process.execPath, [redocly, 'lint', '--extends', 'recommended', '--format', 'json', file], { env }).catch(
      (err: { stdout?: string }) => ({ stdout: err.stdout ?? '' }),
    );
    const report = JSON.parse(stdout) as { totals: { errors: number; warnings: number }; problems: { ruleId: string; message: string }[] };
    expect(report.problems.map((p) => `${p.ruleId}: ${p.message}`)).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  }, 60_000);

  test('swagger-parser validates it', async () => {
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeDefined();
  });

  test('no non-standard keywords: imgtool extensions are x-… vendor extensions', () => {
    const text = JSON.stringify(doc);
    expect(text).not.toMatch(/"extension":/);
    expect(text).toMatch(/"x-imgtool-extension":true/);
    expect(text).not.toMatch(/interface\.md|decisions\.md/);
  });

  test('every route the server answers is documented with the methods it takes, and nothing more', async () => {
    const served = routePaths(h.app.printRoutes({ commonPrefix: false }));
    expect(served.length).toBeGreaterThan(10);
    const documented = Object.keys(doc.paths).map((p) => p.replace(/\{(\w+)\}/g, ':$1'));
    expect([...served].sort()).toEqual([...documented].sort());
    for (const path of served) {
      const url = path.replace(/:(\w+)/g, 'x');
      const methods: string[] = [];
      for (const method of ['GET', 'POST', 'PUT', 'DELETE', 'PATCH'] as const) {
        // Known paths answer other methods with 405 before any authentication.
        const r = await h.app.inject({ method, url });
        if (r.statusCode !== 405) methods.push(method.toLowerCase());
      }
      expect({ path, methods }).toEqual({ path, methods: Object.keys(doc.paths[path.replace(/:(\w+)/g, '{$1}')]!).sort() });
    }
  });
});

import type { Command } from 'commander';
import { workerSettings } from '../../server/server-options.js';
import { defaultDataDir } from '../../server/settings.js';
import { addSettingOptions, resolveSettings } from '../../server/settings-sources.js';

/**
 * `imgtool worker`: a cluster worker. It serves the BullMQ job queue (the given operations) on
 * the cluster's Redis, reading inputs from and writing outputs to the shared data dir; API
 * nodes (`imgtool serve --redis ...`) do the billing and answer the clients. SIGTERM drains:
 * no new jobs are taken and the running ones finish before it exits. Its flags, environment
 * variables and config-file keys come from server/settings.ts, as serve's do.
 */

interface Out {
  stdout: NodeJS.WritableStream;
  stderr?: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
  signal?: AbortSignal;
}

/** One JSON line per event on stderr, like the server's pino lines. */
function lineLogger(stream: NodeJS.WritableStream, level: string) {
  const rank = { info: 1, warn: 2, error: 3, silent: 9 } as Record<string, number>;
  const min = rank[level] ?? 1;
  const write = (lvl: string) => (o: object, msg: string) => {
    if ((rank[lvl] ?? 1) >= min) stream.write(`${JSON.stringify({ level: lvl, time: Date.now(), pid: process.pid, ...o, msg })}\n`);
  };
  return { info: write('info'), warn: write('warn'), error: write('error') };
}

export function registerWorkerCommand(program: Command, io?: Partial<Out>): void {
  const out: Out = { stdout: io?.stdout ?? process.stdout, stderr: io?.stderr ?? process.stderr, env: io?.env ?? process.env, signal: io?.signal };
  const worker = program
    .command('worker')
    .summary('Run pipelines for an imgtool serve cluster')
    .description(
      `Takes work from the cluster's job queue in Redis (as many jobs as --concurrency) and runs the pipelines on this machine. Inputs and results go through --data-dir (default ${defaultDataDir(out.env)}), which must be the same shared directory the API nodes use.`,
    );
  addSettingOptions(worker, 'worker', out.env);
  worker.action(async (_flags: unknown, cmd: Command) => {
    const s = workerSettings(resolveSettings('worker', cmd.opts(), out.env));
    const { connectRedis } = await import('../../server/redis-accounts.js');
    const { connectionFromUrl } = await import('../../server/cluster/queues.js');
    const { startWorkerNode } = await import('../../server/cluster/worker-node.js');
    const { closeRedis, exitWhenStuck } = await import('../../server/cluster/closing.js');
    const redis = await connectRedis(s.redis);
    const log = lineLogger(out.stderr ?? process.stderr, s.log);
    const node = await startWorkerNode({
      connection: connectionFromUrl(s.redis),
      prefix: s.prefix,
      dataDir: s.dataDir,
      redis,
      concurrency: s.concurrency,
      threads: s.threads,
      operations: s.operations,
      isolation: s.isolation,
      lockMs: s.lockMs,
      log,
    });
    out.stdout.write(`imgtool worker ${node.id} ready (data in ${s.dataDir})\n`);
    let stopping: Promise<void> | undefined;
    const stop = () =>
      (stopping ??= (async () => {
        log.info({ worker: node.id }, 'draining: finishing running jobs');
        await node.close();
        await closeRedis(redis);
        log.info({ worker: node.id }, 'stopped');
      })());
    if (out.signal) out.signal.addEventListener('abort', () => void stop().then(exitWhenStuck), { once: true });
    else {
      process.once('SIGTERM', () => void stop().then(() => process.exit(0)));
      process.once('SIGINT', () => void stop().then(() => process.exit(0)));
    }
  });
}

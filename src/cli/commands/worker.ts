import type { Command } from 'commander';
import { ImgtoolError } from '../../errors.js';
import { defaultDataDir } from './serve.js';

/**
 * `imgtool worker`: a cluster worker. It serves the BullMQ job queue (the given operations) on
 * the cluster's Redis, reading inputs from and writing outputs to the shared data dir; API
 * nodes (`imgtool serve --redis ...`) do the billing and answer the clients. SIGTERM drains:
 * no new jobs are taken and the running ones finish before it exits.
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
  program
    .command('worker')
    .summary('Run pipelines for an imgtool serve cluster')
    .description(
      "Takes work from the cluster's job queue in Redis (as many jobs as --concurrency) and runs the pipelines on this machine. Inputs and results go through --data-dir, which must be the same shared directory the API nodes use.",
    )
    .requiredOption('--redis <url>', "the cluster's Redis (redis://host:port)")
    .option('--redis-prefix <prefix>', 'prefix of every Redis key (default imgtool:), as given to serve')
    .option('--data-dir <dir>', `the shared data dir (default ${defaultDataDir(out.env)})`)
    .option('--ops <list>', 'comma-separated operations to serve (default all), e.g. remove-background,upscale')
    .option('--concurrency <n>', 'pipelines running at once (default 1)', '1')
    .option(
      '--threads <n>',
      'onnxruntime threads per pipeline (default: cores / concurrency); with several workers on one machine give each its share of the cores',
    )
    .option('--stall-timeout <seconds>', 'a job whose worker stops renewing its lock this long is given to another worker (default 30)', '30')
    .option('--log <level>', 'log level: info, warn, error, silent (default info)', 'info')
    .action(
      async (flags: {
        redis: string;
        redisPrefix?: string;
        dataDir?: string;
        ops?: string;
        concurrency: string;
        threads?: string;
        stallTimeout: string;
        log: string;
      }) => {
        if (!/^rediss?:\/\//.test(flags.redis))
          throw new ImgtoolError('invalid_parameter', `--redis must be a redis:// or rediss:// URL, got ${JSON.stringify(flags.redis)}`);
        const concurrency = Number(flags.concurrency);
        if (!Number.isInteger(concurrency) || concurrency < 1)
          throw new ImgtoolError('invalid_parameter', `--concurrency must be a whole number >= 1, got ${JSON.stringify(flags.concurrency)}`);
        const threads = flags.threads === undefined ? undefined : Number(flags.threads);
        if (threads !== undefined && (!Number.isInteger(threads) || threads < 1))
          throw new ImgtoolError('invalid_parameter', `--threads must be a whole number >= 1, got ${JSON.stringify(flags.threads)}`);
        const stall = Number(flags.stallTimeout);
        if (!Number.isFinite(stall) || stall < 1 || stall > 3600)
          throw new ImgtoolError('invalid_parameter', `--stall-timeout must be seconds from 1 to 3600, got ${JSON.stringify(flags.stallTimeout)}`);
        const { resolve } = await import('node:path');
        const { connectRedis } = await import('../../server/redis-accounts.js');
        const { connectionFromUrl } = await import('../../server/cluster/queues.js');
        const { startWorkerNode } = await import('../../server/cluster/worker-node.js');
        const { closeRedis, exitWhenStuck } = await import('../../server/cluster/closing.js');
        const dataDir = resolve(flags.dataDir ?? defaultDataDir(out.env));
        const prefix = flags.redisPrefix ?? 'imgtool:';
        const redis = await connectRedis(flags.redis);
        const log = lineLogger(out.stderr ?? process.stderr, flags.log);
        const node = await startWorkerNode({
          connection: connectionFromUrl(flags.redis),
          prefix,
          dataDir,
          redis,
          concurrency,
          threads,
          operations: flags.ops
            ?.split(',')
            .map((s) => s.trim())
            .filter(Boolean),
          lockMs: Math.round(stall * 1000),
          log,
        });
        out.stdout.write(`imgtool worker ${node.id} ready (data in ${dataDir})\n`);
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
      },
    );
}

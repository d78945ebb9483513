import { randomUUID } from 'node:crypto';
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyBaseLogger, LogController, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import multipart from '@fastify/multipart';
import rateLimit from '@fastify/rate-limit';
import { ImgtoolError, isImgtoolError } from '../errors.js';
import { createAuthenticator, type Credential, type JwtOptions } from './auth.js';
import { Billing } from './billing.js';
import { type Execute, type Jobs, JobStore } from './jobs.js';
import { DEFAULT_LEASE_MS, LeaseKeeper } from './leases.js';
import { type Backends, openBackends, type RedisOptions } from './backends.js';
import type { WorkerNode } from './cluster/worker-node.js';
import type { AccountStore, IdempotencyStore } from './stores.js';
import { WorkerPool } from './pool.js';
import { createPipelineRunner } from './pipelines.js';
import { loadSecret, ResultStore } from './results.js';
import { registerRoutes } from './routes.js';
import type { RecycleOptions } from './recycle.js';
import { installTransportGuards, transportServerOptions } from './transport.js';
import type { TimeoutOptions } from './timeouts.js';

declare module 'fastify' {
  interface FastifyRequest {
    credential?: Credential;
  }
  interface FastifyContextConfig {
    operation?: string;
  }
}

export interface ServerOptions {
  /** Keys, ledger, jobs, results and the signing secret live here. */
  dataDir: string;
  /** Absolute base for result URLs (e.g. https://img.example.com); default: from the request's Host. */
  publicUrl?: string;
  /** Requests per window per credential; false disables. Default 5 per 1000 ms. */
  rateLimit?: { max: number; windowMs?: number } | false;
  /** Let URL inputs reach loopback/private/link-local addresses (trusted networks and tests only). */
  allowPrivateUrls?: boolean;
  jwt?: JwtOptions & { subjectCredits?: number };
  /** Pipelines running at once; default cores - 1 (at least 1). */
  concurrency?: number;
  /** Requests/jobs waiting for a worker before new ones get 503. Default 100. */
  maxQueue?: number;
  fetchTimeoutMs?: number;
  /** Milliseconds since the epoch; tests inject one to move time. */
  clock?: () => number;
  resultTtlMs?: number;
  jobRetentionMs?: number;
  /** How often expired results and jobs are deleted; 0 disables the timer. Default 60 s. */
  sweepIntervalMs?: number;
  /** Fastify/pino logger options; false (default) is silent. */
  logger?: FastifyServerOptions['logger'];
  /** File-lock the key store on every change (default true: safe for several processes). */
  crossProcessLock?: boolean;
  /**
   * Lease of a credit hold or idempotency claim, renewed every third of it while the work runs:
   * after a kill -9 the reservation is refunded within about 1.5 leases. Default 10 s.
   */
  leaseMs?: number;
  /**
   * 'threads' (default) runs pipelines on piscina threads so their synchronous work cannot stall
   * the event loop; 'inline' runs them on the main thread. Threads load the compiled
   * dist/server/pipeline-thread.js, also under a TypeScript test runner (pipelines.ts).
   */
  isolation?: 'threads' | 'inline';
  /** Header, body-idle, whole-request and keep-alive timeouts (transport.ts has the defaults). */
  timeouts?: TimeoutOptions;
  /** When pipeline threads are retired to give their memory back (recycle.ts has the defaults). */
  recycle?: RecycleOptions;
  /**
   * Cluster mode: keys, balances, holds, the ledger, idempotency records and rate-limit counters
   * live in this Redis, shared by every API node. Without it (the default) they are files in dataDir.
   */
  redis?: RedisOptions;
  /**
   * Cluster mode only: pipelines this API node runs itself for the cluster's queues (default
   * cores - 1); 0 makes it a pure API node that leaves all work to `imgtool worker` processes.
   */
  workers?: number;
  /** Cluster mode: this node's name in its log lines. */
  nodeId?: string;
  /** Cluster mode: BullMQ lock duration of this node's workers (tests shorten it to see stalls quickly). */
  workerLockMs?: number;
}

export interface ImgtoolServer {
  keys: AccountStore;
  billing: Billing;
  leases: LeaseKeeper;
  idempotency: IdempotencyStore;
  jobs: Jobs;
  results: ResultStore;
  pool: WorkerPool;
  /** Deletes expired results and jobs now. */
  sweep: () => Promise<void>;
}

declare module 'fastify' {
  interface FastifyInstance {
    imgtool: ImgtoolServer;
  }
}

/** Maps fastify's own transport errors onto the spec's error body. */
function transportError(err: { code?: string; statusCode?: number; message: string }): ImgtoolError | undefined {
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ImgtoolError('file_size_too_large', 'the request body is larger than this endpoint accepts', { status: 413 });
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ImgtoolError('invalid_parameter', 'send Content-Type application/json or multipart/form-data', { status: 415 });
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new ImgtoolError('invalid_parameter', `the body is not valid JSON (${err.message})`);
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
      return new ImgtoolError('invalid_parameter', 'malformed multipart/form-data body');
  }
  if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500 && err.code?.startsWith('FST_')) {
    return new ImgtoolError('invalid_parameter', err.message, { status: err.statusCode });
  }
  return undefined;
}

/**
 * Work dirs of API nodes and temp dirs of workers that were killed: nothing live is a day old
 * (a run waits in its queue for minutes, not days), so older entries are leftovers.
 */
async function sweepClusterLeftovers(dataDir: string, now: number): Promise<void> {
  for (const sub of ['work', 'tmp']) {
    const dir = join(dataDir, 'cluster', sub);
    for (const name of await readdir(dir).catch(() => [] as string[])) {
      const st = await stat(join(dir, name)).catch(() => undefined);
      if (st && now - st.mtimeMs > 24 * 3600 * 1000) await rm(join(dir, name), { recursive: true, force: true });
    }
  }
}

/**
 * The lease of an async job's credit hold in a cluster: long, because it is renewed from outside
 * the process that took it (by the reconcile while the job is queued, by its worker while it
 * runs), yet short enough that a cluster left without API nodes refunds within minutes.
 */
const jobLeaseMs = (leaseMs: number) => Math.max(60_000, 6 * leaseMs);

/** Cluster mode: the queues this node sends work to, and its own workers (unless --workers 0). */
async function startCluster(o: ServerOptions, b: Backends, isolation: 'threads' | 'inline', log: FastifyBaseLogger) {
  const { QueueDispatcher, connectionFromUrl } = await import('./cluster/queues.js');
  const settings = { connection: connectionFromUrl(o.redis!.url), prefix: b.prefix!, dataDir: o.dataDir };
  const dispatcher = new QueueDispatcher(settings, b.redis!);
  const n = o.workers ?? o.concurrency ?? Math.max(1, availableParallelism() - 1);
  let worker: WorkerNode | undefined;
  if (n > 0) {
    const { startWorkerNode } = await import('./cluster/worker-node.js');
    worker = await startWorkerNode({
      ...settings,
      concurrency: n,
      redis: b.redis!,
      log,
      lockMs: o.workerLockMs,
      isolation,
      jobRetentionMs: o.jobRetentionMs,
    });
  }
  return {
    dispatcher,
    close: async () => {
      await worker?.close();
      await dispatcher.close();
    },
  };
}

export async function buildServer(o: ServerOptions): Promise<FastifyInstance> {
  const clock = o.clock ?? Date.now;
  const tmpRoot = join(o.dataDir, 'tmp');
  await mkdir(tmpRoot, { recursive: true, mode: 0o700 });

  const app = Fastify({
    logger: o.logger ?? false,
    genReqId: () => randomUUID(),
    // One line per request from the onResponse hook below instead of fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    ...transportServerOptions(o.timeouts),
  });
  installTransportGuards(app, o.timeouts, o.dataDir);

  const backends = await openBackends({ dataDir: o.dataDir, redis: o.redis, subjectCredits: o.jwt?.subjectCredits, crossProcess: o.crossProcessLock, clock });
  const { keys, idempotency } = backends;
  const leases = new LeaseKeeper({ holds: keys, idempotency, tmpRoot, leaseMs: o.leaseMs ?? DEFAULT_LEASE_MS, log: app.log });
  const billing = new Billing(keys, leases);
  // Pipelines' temp files go in this instance's own directory, which the sweep removes once this instance is gone.
  const tmpDir = leases.tmpDir;
  await mkdir(tmpDir, { recursive: true, mode: 0o700 });
  const results = await new ResultStore(o.dataDir, await loadSecret(o.dataDir), clock, o.resultTtlMs).init();
  const isolation = o.isolation ?? 'threads';
  const cluster = backends.redis ? await startCluster(o, backends, isolation, app.log) : undefined;
  const concurrency = o.concurrency ?? Math.max(1, availableParallelism() - 1);
  const maxQueue = o.maxQueue ?? 100;
  // The limiter in front: standalone it bounds the pipelines; in a cluster only the requests waiting for the queues (the workers bound the pipelines).
  const pool = new WorkerPool(cluster ? maxQueue : concurrency, maxQueue);
  const pipelines = cluster ? undefined : createPipelineRunner({ mode: isolation, concurrency, maxQueue, recycle: o.recycle, tmpDir });
  const execute: Execute = (job, ctx) => (cluster ? cluster.dispatcher.execute(job, ctx) : pipelines!.execute(job, ctx));
  let jobs: Jobs;
  if (cluster) {
    // Job records in Redis: any node answers for any job, and the worker that runs one charges it.
    const { RedisJobStore } = await import('./cluster/redis-jobs.js');
    const { JobBooks, RedisJobRecords } = await import('./cluster/job-records.js');
    const records = new RedisJobRecords(backends.redis!, { prefix: backends.prefix!, retentionMs: o.jobRetentionMs, clock });
    jobs = new RedisJobStore({
      dataDir: o.dataDir,
      redis: backends.redis!,
      prefix: backends.prefix!,
      records,
      books: new JobBooks(records, keys, { dataDir: o.dataDir, resultsDir: results.dir, log: app.log }),
      holds: keys,
      dispatcher: cluster.dispatcher,
      leaseMs: jobLeaseMs(o.leaseMs ?? DEFAULT_LEASE_MS),
      clock,
      log: o.nodeId ? app.log.child({ node: o.nodeId }) : app.log,
    });
  } else jobs = new JobStore({ dataDir: o.dataDir, billing, results, pool, clock, log: app.log, retentionMs: o.jobRetentionMs, tmpDir, execute });
  const authenticate = await createAuthenticator(keys, o.jwt);

  const sweep = async () => {
    await jobs.sweep();
    // In a cluster the shared results dir is swept by one node at a time (a Redis lock with a TTL).
    if (backends.redis) {
      const lock = `${backends.prefix}sweep-lock`;
      const got = (await backends.redis.set(lock, keys.instance, 'PX', 30_000, 'NX')) === 'OK' || (await backends.redis.get(lock)) === keys.instance;
      if (!got) return;
    }
    await results.sweep();
    await idempotency.sweep();
    if (cluster) await sweepClusterLeftovers(o.dataDir, clock());
  };
  app.decorate('imgtool', { keys, billing, leases, idempotency, jobs, results, pool, sweep });

  // An empty JSON body is an empty object (cancel endpoints take no body).
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    if (body === '' || body === undefined) return done(null, {});
    try {
      done(null, JSON.parse(body as string));
    } catch (err) {
      done(new ImgtoolError('invalid_parameter', `the body is not valid JSON (${(err as Error).message})`), undefined);
    }
  });

  await app.register(multipart, { throwFileSizeLimit: true });
  const rl = o.rateLimit === undefined ? { max: 5, windowMs: 1000 } : o.rateLimit;
  await app.register(rateLimit, {
    global: false,
    // After authentication, so the limit is per credential rather than per IP.
    hook: 'preHandler',
    keyGenerator: (req) => req.credential?.id ?? req.ip,
    // In a cluster the counters are in Redis, so a credential's limit holds across all API nodes.
    ...(backends.redis ? { redis: backends.redis, nameSpace: `${backends.prefix}rl:` } : {}),
    errorResponseBuilder: (_req, ctx) =>
      new ImgtoolError(
        'rate_limit_exceeded',
        `too many requests: at most ${ctx.max} per ${ctx.after} for this credential; retry after the Retry-After header's seconds`,
      ),
  });

  app.setErrorHandler((err, req, reply) => {
    const known = isImgtoolError(err) ? err : transportError(err as { code?: string; statusCode?: number; message: string });
    if (known?.code === 'internal_error') {
      // A bug, not a client mistake: the log gets the stack (a worker thread's own, when it came from one), the client only the request id.
      req.log.error({ err: known, request: req.id, credential: req.credential?.id, operation: req.routeOptions.config?.operation }, 'internal error');
      return reply.code(500).send({ error: `internal error (request ${req.id}); the server log has the details`, error_code: 'internal_error' });
    }
    if (known) {
      if (known.code === 'rate_limit_exceeded' && !reply.hasHeader('retry-after')) reply.header('retry-after', '1');
      return reply.code(known.status).send(known.toBody());
    }
    req.log.error({ err, request: req.id, credential: req.credential?.id, operation: req.routeOptions.config?.operation }, 'unhandled error');
    return reply.code(500).send({ error: `internal error (request ${req.id}); the server log has the details`, error_code: 'internal_error' });
  });

  app.setNotFoundHandler((req, reply) => {
    reply.code(404).send({ error: `no route ${req.method} ${req.url.split('?')[0]}; see /openapi.json`, error_code: 'not_found' });
  });

  app.addHook('onResponse', async (req, reply) => {
    req.log.info(
      {
        credential: req.credential?.id,
        operation: req.routeOptions.config?.operation,
        method: req.method,
        path: req.url.split('?')[0],
        status: reply.statusCode,
        duration_ms: Math.round(reply.elapsedTime * 10) / 10,
      },
      'request',
    );
  });

  // Readiness (as opposed to /health, liveness): the shared state is reachable and, in a
  // cluster, some worker is there to take the work.
  const ready = async (): Promise<{ ready: true; redis?: string; workers?: number }> => {
    if (!backends.redis) return { ready: true };
    try {
      await backends.redis.ping();
    } catch (err) {
      throw new ImgtoolError('service_unavailable', `Redis unreachable (${(err as Error).message})`);
    }
    const { liveWorkers } = await import('./cluster/worker-node.js');
    const workers = (await liveWorkers(backends.redis, backends.prefix!)).length;
    if (!workers) throw new ImgtoolError('service_unavailable', 'no worker has been seen in the last 30 s; start `imgtool worker`');
    return { ready: true, redis: 'ok', workers };
  };

  registerRoutes(app, {
    ready,
    keys,
    billing,
    leases,
    idempotency,
    jobs,
    results,
    pool,
    authenticate,
    tmpDir,
    allowPrivateUrls: o.allowPrivateUrls ?? false,
    fetchTimeoutMs: o.fetchTimeoutMs ?? 30_000,
    publicUrl: o.publicUrl,
    rateLimit: rl ? { max: rl.max, timeWindow: rl.windowMs ?? 1000 } : false,
    execute,
  });

  const interval =
    (o.sweepIntervalMs ?? 60_000) > 0
      ? setInterval(() => sweep().catch((err) => app.log.error({ err }, 'sweep failed')), o.sweepIntervalMs ?? 60_000)
      : undefined;
  interval?.unref();

  app.addHook('onClose', async () => {
    if (interval) clearInterval(interval);
    // Stopped while Redis is unreachable: fail the commands ioredis holds for it at once instead of
    // retrying each for minutes; leases and the other nodes' reconcile recover what this node leaves.
    if (backends.redis && backends.redis.status !== 'ready') backends.redis.disconnect();
    await jobs.shutdown();
    pool.close();
    await pipelines?.close();
    await leases.stop();
    await cluster?.close();
    await backends.close();
  });

  // Jobs resume only once every route exists, so a re-queued job can finish before listen().
  // Recovery adopts the holds of the jobs it resumes before the first lease sweep can refund them.
  await jobs.init();
  await leases.start();
  await leases.sweep();
  await sweep();
  return app;
}

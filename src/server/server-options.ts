import { availableParallelism } from 'node:os';
import type { FastifyServerOptions } from 'fastify';
import { ImgtoolError } from '../errors.js';
import type { JwtOptions } from './auth.js';
import type { RedisOptions } from './backends.js';
import { DEFAULT_REDIS_PREFIX, SETTINGS, type Settings } from './settings.js';
import type { TimeoutOptions } from './timeouts.js';

/**
 * buildServer's options: the settings above in the server's own units (milliseconds, nested
 * objects), plus what only code sets (a clock, a logger, test knobs). Every default is resolved
 * once, by `resolveServerOptions`, from the table.
 */
export interface ServerOptions {
  /** Keys, ledger, jobs, results and the signing secret live here. */
  dataDir: string;
  /** Absolute base for result URLs (e.g. https://img.example.com); default: from the request's Host. */
  publicUrl?: string;
  /** Requests per window per credential; false disables. Default --rate-limit's per 1000 ms. */
  rateLimit?: { max: number; windowMs?: number } | false;
  /** Let URL inputs reach loopback/private/link-local addresses (trusted networks and tests only). */
  allowPrivateUrls?: boolean;
  jwt?: JwtOptions & { subjectCredits?: number };
  /** Pipelines running at once; default cores - 1 (at least 1). */
  concurrency?: number;
  /** Requests/jobs waiting for a worker before new ones get 503. */
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
  /** --hold-lease in ms: a credit hold's or idempotency claim's lease, renewed every third of it while the work runs. */
  leaseMs?: number;
  /** --isolation: pipelines on worker threads, or inline on the main thread. */
  isolation?: 'threads' | 'inline';
  /** Header, body-idle, whole-request and keep-alive timeouts in ms (--header-timeout etc.). */
  timeouts?: TimeoutOptions;
  /** When pipeline threads are retired to give their memory back (--recycle-*). */
  recycle?: RecycleOptions;
  /** Cluster mode (--redis): the shared state and the queues live in this Redis. */
  redis?: RedisOptions;
  /** Cluster mode only: pipelines this API node runs for the cluster (default: concurrency); 0: a pure API node. */
  workers?: number;
  /** Cluster mode: this node's name in its log lines. */
  nodeId?: string;
  /** Cluster mode: BullMQ lock duration of this node's workers (tests shorten it to see stalls quickly). */
  workerLockMs?: number;
}

/** When pipeline threads are retired to give their memory back; every field 0 disables that rule. */
export interface RecycleOptions {
  /** After this many jobs (--recycle-after). */
  maxJobs?: number;
  /** When a thread finishes a job while the process RSS is above this many MB (--recycle-rss). */
  maxRssMb?: number;
  /** After this long idle, in ms (--recycle-idle). */
  idleMs?: number;
}

const ms = (s: number) => Math.round(s * 1000);

/** ServerOptions with every default filled in: what the plugins read (`app.settings`). */
export type ResolvedServerOptions = Omit<
  Required<ServerOptions>,
  'publicUrl' | 'jwt' | 'resultTtlMs' | 'jobRetentionMs' | 'redis' | 'nodeId' | 'workerLockMs' | 'rateLimit' | 'timeouts' | 'recycle'
> &
  Pick<ServerOptions, 'publicUrl' | 'jwt' | 'resultTtlMs' | 'jobRetentionMs' | 'nodeId' | 'workerLockMs'> & {
    rateLimit: { max: number; windowMs: number } | false;
    timeouts: Required<TimeoutOptions>;
    recycle: Required<RecycleOptions>;
    redis?: Required<RedisOptions>;
  };

/** The one place ServerOptions' defaults are applied (from SETTINGS, in the server's units). */
export function resolveServerOptions(o: ServerOptions): ResolvedServerOptions {
  const concurrency = o.concurrency ?? Math.max(1, availableParallelism() - 1);
  const rl = o.rateLimit === undefined ? { max: SETTINGS.rateLimit.default } : o.rateLimit;
  return {
    ...o,
    clock: o.clock ?? Date.now,
    logger: o.logger ?? false,
    rateLimit: rl ? { max: rl.max, windowMs: rl.windowMs ?? 1000 } : false,
    allowPrivateUrls: o.allowPrivateUrls ?? SETTINGS.allowPrivateUrls.default,
    concurrency,
    maxQueue: o.maxQueue ?? SETTINGS.maxQueue.default,
    fetchTimeoutMs: o.fetchTimeoutMs ?? 30_000,
    sweepIntervalMs: o.sweepIntervalMs ?? 60_000,
    crossProcessLock: o.crossProcessLock ?? true,
    leaseMs: o.leaseMs ?? ms(SETTINGS.holdLease.default),
    // Threads by default, also under vitest (the threads load the last build; pipelines.ts).
    isolation: o.isolation ?? SETTINGS.isolation.default,
    timeouts: {
      headersMs: o.timeouts?.headersMs ?? ms(SETTINGS.headerTimeout.default),
      bodyIdleMs: o.timeouts?.bodyIdleMs ?? ms(SETTINGS.bodyTimeout.default),
      requestMs: o.timeouts?.requestMs ?? ms(SETTINGS.requestTimeout.default),
      keepAliveMs: o.timeouts?.keepAliveMs ?? ms(SETTINGS.keepAliveTimeout.default),
    },
    recycle: {
      maxJobs: o.recycle?.maxJobs ?? SETTINGS.recycleAfter.default,
      maxRssMb: o.recycle?.maxRssMb ?? SETTINGS.recycleRss.default,
      idleMs: o.recycle?.idleMs ?? ms(SETTINGS.recycleIdle.default),
    },
    redis: o.redis ? { url: o.redis.url, prefix: o.redis.prefix ?? DEFAULT_REDIS_PREFIX } : undefined,
    workers: o.workers ?? concurrency,
  };
}

/** `imgtool serve`'s settings as buildServer options, with the rules that tie settings together. */
export function serverOptionsFrom(s: Settings): ServerOptions & { port: number; host: string } {
  const jwt = [s.jwtIssuer, s.jwtAudience, s.jwtJwks];
  if (jwt.some(Boolean) && !jwt.every(Boolean))
    throw new ImgtoolError('invalid_parameter', 'bearer tokens need all three of --jwt-issuer, --jwt-audience and --jwt-jwks');
  if (s.workers !== undefined && !s.redis) throw new ImgtoolError('invalid_parameter', '--workers needs --redis (a cluster); without it use --concurrency');
  return {
    port: s.port,
    host: s.host,
    dataDir: s.dataDir,
    publicUrl: s.publicUrl,
    rateLimit: s.rateLimit === 0 ? false : { max: s.rateLimit, windowMs: 1000 },
    allowPrivateUrls: s.allowPrivateUrls,
    concurrency: s.concurrency,
    maxQueue: s.maxQueue,
    isolation: s.isolation,
    leaseMs: ms(s.holdLease),
    jwt: s.jwtIssuer
      ? { issuer: s.jwtIssuer, audience: s.jwtAudience!, jwks: s.jwtJwks!, subjectCredits: s.jwtCredits, allowNoExp: s.jwtAllowNoExp }
      : undefined,
    timeouts: { headersMs: ms(s.headerTimeout), bodyIdleMs: ms(s.bodyTimeout), requestMs: ms(s.requestTimeout), keepAliveMs: ms(s.keepAliveTimeout) },
    recycle: { maxJobs: s.recycleAfter, maxRssMb: s.recycleRss, idleMs: ms(s.recycleIdle) },
    logger: s.log === 'silent' ? false : { level: s.log },
    redis: s.redis ? { url: s.redis, prefix: s.redisPrefix } : undefined,
    workers: s.workers,
    nodeId: s.nodeId,
  };
}

/** `imgtool worker`'s settings: --redis is required (flag, IMGTOOL_REDIS_URL or the config file). */
export function workerSettings(s: Settings) {
  if (!s.redis) throw new ImgtoolError('invalid_parameter', `worker needs --redis redis://host:port (or ${SETTINGS.redis.env}, or "redis" in --config)`);
  return {
    redis: s.redis,
    prefix: s.redisPrefix,
    dataDir: s.dataDir,
    operations: s.ops,
    concurrency: s.concurrency ?? SETTINGS.concurrency.worker.default,
    threads: s.threads,
    isolation: s.isolation,
    lockMs: ms(s.stallTimeout),
    log: s.log,
  };
}

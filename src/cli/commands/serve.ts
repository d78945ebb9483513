import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { ImgtoolError } from '../../errors.js';
import { imgtoolHome } from '../../config.js';
import { RECYCLE_DEFAULTS } from '../../server/recycle.js';
import { TIMEOUT_DEFAULTS } from '../../server/timeouts.js';

/**
 * `imgtool serve`: runs the v1 API server, and `imgtool serve keys ...` manages its API keys.
 * Precedence: built-in defaults < --config file < environment (IMGTOOL_HOME) < flags.
 */

export const SERVE_DEFAULTS = { port: 8080, host: '127.0.0.1', rateLimit: 5 } as const;

interface Out {
  stdout: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
  /** The CLI's interrupt signal (main.ts turns SIGINT/SIGTERM into it); without one, serve installs its own handlers. */
  signal?: AbortSignal;
  /** Set to the exit code a subcommand ends with (the CLI's io object). */
  exitCode?: number;
}

interface ServeConfigFile {
  port?: number;
  host?: string;
  dataDir?: string;
  publicUrl?: string;
  rateLimit?: number;
  allowPrivateUrls?: boolean;
  concurrency?: number;
  holdLease?: number;
  /** Cluster mode: redis://host:port (shared state for every API node). */
  redis?: string;
  redisPrefix?: string;
  jwt?: { issuer: string; audience: string; jwks: string; subjectCredits?: number; allowNoExp?: boolean };
  /** Seconds. */
  headerTimeout?: number;
  bodyTimeout?: number;
  requestTimeout?: number;
  keepAliveTimeout?: number;
  recycleAfter?: number;
  recycleRss?: number;
  /** Seconds. */
  recycleIdle?: number;
}

interface ServeFlags {
  port?: string;
  host?: string;
  dataDir?: string;
  config?: string;
  publicUrl?: string;
  rateLimit?: string;
  allowPrivateUrls?: boolean;
  concurrency?: string;
  jwtIssuer?: string;
  jwtAudience?: string;
  jwtJwks?: string;
  jwtCredits?: string;
  holdLease?: string;
  jwtAllowNoExp?: boolean;
  headerTimeout?: string;
  bodyTimeout?: string;
  requestTimeout?: string;
  keepAliveTimeout?: string;
  recycleAfter?: string;
  recycleRss?: string;
  recycleIdle?: string;
  log?: string;
  redis?: string;
  redisPrefix?: string;
  workers?: string;
  nodeId?: string;
}

function int(v: string | number | undefined, what: string, min: number): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new ImgtoolError('invalid_parameter', `${what} must be a whole number >= ${min}, got ${JSON.stringify(v)}`);
  return n;
}

function leaseSeconds(v: string | number | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0.3 || n > 3600)
    throw new ImgtoolError('invalid_parameter', `--hold-lease must be a number of seconds from 0.3 to 3600, got ${JSON.stringify(v)}`);
  return Math.round(n * 1000);
}

/** Seconds (flag or config) to milliseconds; fractions allowed so tests and tight setups can go below a second. */
export function seconds(v: string | number | undefined, what: string, min: 0 | 'above0' = 'above0'): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0 || (min === 'above0' && n === 0))
    throw new ImgtoolError(
      'invalid_parameter',
      `${what} must be a number of seconds ${min === 0 ? '>= 0' : '> 0'}, got ${JSON.stringify(String(v).slice(0, 80))}`,
    );
  return Math.round(n * 1000);
}

export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(imgtoolHome(env), 'server');
}

function readConfig(path: string | undefined): ServeConfigFile {
  if (!path) return {};
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as ServeConfigFile;
  } catch (err) {
    throw new ImgtoolError('invalid_parameter', `--config ${path} is not a readable JSON file (${(err as Error).message})`);
  }
}

/** --redis / --redis-prefix (flags over --config), or undefined for the file backends. */
function redisFrom(flags: { redis?: string; redisPrefix?: string; config?: string }): { url: string; prefix?: string } | undefined {
  const cfg = readConfig(flags.config);
  const url = flags.redis ?? cfg.redis;
  if (!url) return undefined;
  if (!/^rediss?:\/\//.test(url)) throw new ImgtoolError('invalid_parameter', `--redis must be a redis:// or rediss:// URL, got ${JSON.stringify(url)}`);
  return { url, prefix: flags.redisPrefix ?? cfg.redisPrefix };
}

function dataDirFrom(flags: { dataDir?: string; config?: string }, env: NodeJS.ProcessEnv): string {
  return resolve(flags.dataDir ?? readConfig(flags.config).dataDir ?? defaultDataDir(env));
}

export function registerServeCommand(program: Command, io?: Partial<Out>): void {
  const out: Out = { stdout: io?.stdout ?? process.stdout, env: io?.env ?? process.env, signal: io?.signal };
  const setExit = (code: number) => {
    if (io) io.exitCode = code;
    else process.exitCode = code;
  };
  const serve = program
    .command('serve')
    .summary('Run the v1 API server')
    .description(
      `Serves the v1 API (interface.md) over HTTP from this machine's pipelines. Keys, credits, jobs and results live in --data-dir (default ${defaultDataDir(out.env)}). Create a key first with \`imgtool serve keys create\`.`,
    )
    .option('--port <n>', `TCP port (default ${SERVE_DEFAULTS.port})`)
    .option('--host <addr>', `address to bind (default ${SERVE_DEFAULTS.host}; 0.0.0.0 for every interface)`)
    .option('--data-dir <dir>', 'where keys, ledger, jobs and results are stored')
    .option(
      '--config <file>',
      'JSON file with any of: port, host, dataDir, publicUrl, rateLimit, allowPrivateUrls, concurrency, holdLease (seconds), redis, redisPrefix, jwt {issuer, audience, jwks, subjectCredits, allowNoExp}, headerTimeout, bodyTimeout, requestTimeout, keepAliveTimeout (seconds), recycleAfter, recycleRss, recycleIdle',
    )
    .option('--public-url <url>', 'base of result URLs when behind a proxy (default: the request Host)')
    .option('--rate-limit <n>', `requests per second per credential (default ${SERVE_DEFAULTS.rateLimit}; 0 disables)`)
    .option('--allow-private-urls', 'let image_url/video_url reach loopback and private networks (trusted setups only)')
    .option('--concurrency <n>', 'pipelines running at once (default: cores - 1)')
    .option('--jwt-issuer <iss>', 'accept OAuth 2.0 bearer JWTs from this issuer')
    .option('--jwt-audience <aud>', 'required audience of bearer JWTs')
    .option('--jwt-jwks <url|file>', 'JWKS URL or file used to verify bearer JWTs')
    .option('--jwt-credits <n>', 'credits a new JWT subject starts with (default 0)')
    .option(
      '--hold-lease <seconds>',
      'lease of a credit reservation, renewed while its work runs; after a crash it is refunded within ~1.5 leases (default 10)',
    )
    .option('--jwt-allow-no-exp', 'accept bearer JWTs without an exp claim (refused by default: such a token never expires)')
    .option('--header-timeout <s>', `seconds for a request's headers to arrive (default ${TIMEOUT_DEFAULTS.headersMs / 1000})`)
    .option('--body-timeout <s>', `longest silence while a request body arrives, in seconds (default ${TIMEOUT_DEFAULTS.bodyIdleMs / 1000})`)
    .option('--request-timeout <s>', `seconds for a whole request, body included, to arrive (default ${TIMEOUT_DEFAULTS.requestMs / 1000})`)
    .option('--keep-alive-timeout <s>', `seconds an idle keep-alive connection is kept (default ${TIMEOUT_DEFAULTS.keepAliveMs / 1000})`)
    .option('--recycle-after <jobs>', `retire a pipeline thread after this many jobs to give its memory back (default ${RECYCLE_DEFAULTS.maxJobs}; 0 never)`)
    .option(
      '--recycle-rss <MB>',
      `retire a pipeline thread that finishes a job while the server's RSS is above this (default ${RECYCLE_DEFAULTS.maxRssMb}; 0 never)`,
    )
    .option(
      '--recycle-idle <s>',
      `retire a pipeline thread idle this many seconds, so a quiet server shrinks (default ${RECYCLE_DEFAULTS.idleMs / 1000}; 0 never)`,
    )
    .option('--log <level>', 'log level: info, warn, error, silent (default info)')
    .option(
      '--redis <url>',
      'cluster mode: keep keys, balances, ledger, idempotency records and rate limits in this Redis (redis://host:port), shared by every API node; --data-dir must then be a directory all nodes share',
    )
    .option('--redis-prefix <prefix>', 'prefix of every Redis key (default imgtool:), to share one Redis between deployments')
    .option('--workers <n>', 'with --redis: pipelines this node runs for the cluster (default: cores - 1); 0 = API only, work goes to `imgtool worker`')
    .option('--node-id <name>', "with --redis: this API node's name in its log lines (job records live in Redis, so any node answers for any job)")
    .action(async (flags: ServeFlags) => {
      const cfg = readConfig(flags.config);
      const jwtIssuer = flags.jwtIssuer ?? cfg.jwt?.issuer;
      const jwtAudience = flags.jwtAudience ?? cfg.jwt?.audience;
      const jwtJwks = flags.jwtJwks ?? cfg.jwt?.jwks;
      if ([jwtIssuer, jwtAudience, jwtJwks].some(Boolean) && ![jwtIssuer, jwtAudience, jwtJwks].every(Boolean)) {
        throw new ImgtoolError('invalid_parameter', 'bearer tokens need all three of --jwt-issuer, --jwt-audience and --jwt-jwks');
      }
      const rate = int(flags.rateLimit ?? cfg.rateLimit, '--rate-limit', 0) ?? SERVE_DEFAULTS.rateLimit;
      if (flags.workers !== undefined && !redisFrom(flags))
        throw new ImgtoolError('invalid_parameter', '--workers needs --redis (a cluster); without it use --concurrency');
      const { startServer } = await import('../../server/listen.js');
      const level = flags.log ?? 'info';
      const redis = redisFrom(flags);
      const { url, close } = await startServer({
        port: int(flags.port ?? cfg.port, '--port', 0) ?? SERVE_DEFAULTS.port,
        host: flags.host ?? cfg.host ?? SERVE_DEFAULTS.host,
        dataDir: dataDirFrom(flags, out.env),
        publicUrl: flags.publicUrl ?? cfg.publicUrl,
        rateLimit: rate === 0 ? false : { max: rate, windowMs: 1000 },
        allowPrivateUrls: flags.allowPrivateUrls ?? cfg.allowPrivateUrls ?? false,
        concurrency: int(flags.concurrency ?? cfg.concurrency, '--concurrency', 1),
        leaseMs: leaseSeconds(flags.holdLease ?? cfg.holdLease),
        jwt: jwtIssuer
          ? {
              issuer: jwtIssuer,
              audience: jwtAudience!,
              jwks: jwtJwks!,
              subjectCredits: int(flags.jwtCredits ?? cfg.jwt?.subjectCredits, '--jwt-credits', 0),
              allowNoExp: flags.jwtAllowNoExp ?? cfg.jwt?.allowNoExp ?? false,
            }
          : undefined,
        timeouts: {
          headersMs: seconds(flags.headerTimeout ?? cfg.headerTimeout, '--header-timeout'),
          bodyIdleMs: seconds(flags.bodyTimeout ?? cfg.bodyTimeout, '--body-timeout'),
          requestMs: seconds(flags.requestTimeout ?? cfg.requestTimeout, '--request-timeout'),
          keepAliveMs: seconds(flags.keepAliveTimeout ?? cfg.keepAliveTimeout, '--keep-alive-timeout'),
        },
        recycle: {
          maxJobs: int(flags.recycleAfter ?? cfg.recycleAfter, '--recycle-after', 0),
          maxRssMb: int(flags.recycleRss ?? cfg.recycleRss, '--recycle-rss', 0),
          idleMs: seconds(flags.recycleIdle ?? cfg.recycleIdle, '--recycle-idle', 0),
        },
        logger: level === 'silent' ? false : { level },
        handleSignals: !out.signal,
        redis,
        workers: int(flags.workers, '--workers', 0),
        nodeId: flags.nodeId,
      });

      // Graceful stop: in-flight requests finish, running jobs go back to pending for the next start.
      out.signal?.addEventListener(
        'abort',
        () =>
          void close().then(async () => {
            if (redis) (await import('../../server/cluster/closing.js')).exitWhenStuck();
          }),
        { once: true },
      );
      out.stdout.write(`imgtool serve listening on ${url} (data in ${dataDirFrom(flags, out.env)})\n`);
    });

  const keys = serve.command('keys').description('Manage the API keys of the server in --data-dir (give --data-dir/--config as for serve)');
  // --data-dir and --config belong to `serve`; commander parses them anywhere on the line.
  // The admin commands work on whichever backend the server uses: the data dir's files, or Redis with --redis.
  const withStore = async <T>(cmd: Command, fn: (s: import('../../server/stores.js').AccountStore) => Promise<T>): Promise<T> => {
    const flags = cmd.optsWithGlobals() as { dataDir?: string; config?: string; redis?: string; redisPrefix?: string };
    const redis = redisFrom(flags);
    if (!redis) {
      const { KeyStore } = await import('../../server/keys.js');
      return fn(await new KeyStore(dataDirFrom(flags, out.env)).init());
    }
    const { connectRedis, RedisAccountStore } = await import('../../server/redis-accounts.js');
    const client = await connectRedis(redis.url);
    try {
      return await fn(new RedisAccountStore(client, { prefix: redis.prefix }));
    } finally {
      await client.quit().catch(() => client.disconnect());
    }
  };

  keys
    .command('create')
    .description('Create a key and print it once (only its hash is stored)')
    .option('--scopes <list>', 'comma-separated scopes', 'imaging:read,imaging:write')
    .option('--credits <n>', 'starting credit balance', '0')
    .option('--label <text>', 'a note to recognise the key by')
    .option('--json', 'print JSON')
    .action(async (flags: { scopes: string; credits: string; label?: string; json?: boolean }, cmd: Command) => {
      const { key, record } = await withStore(cmd, (s) =>
        s.createKey({ scopes: flags.scopes.split(','), credits: int(flags.credits, '--credits', 0)!, label: flags.label }),
      );
      out.stdout.write(
        flags.json
          ? JSON.stringify({ ...record, key }) + '\n'
          : `${key}\n  id ${record.id}, scopes ${record.scopes.join(' ')}, ${record.credits} credits\n  Store the key now: it cannot be shown again.\n`,
      );
    });

  keys
    .command('list')
    .description('List keys (id, prefix, scopes, balance; never the secret)')
    .option('--json', 'print JSON')
    .action(async (flags: { json?: boolean }, cmd: Command) => {
      const list = await withStore(cmd, (s) => s.listKeys());
      if (flags.json) out.stdout.write(JSON.stringify(list) + '\n');
      else
        for (const k of list)
          out.stdout.write(
            `${k.id}  ${k.prefix}...  ${k.scopes.join(',').padEnd(26)} ${String(k.credits).padStart(8)} credits  ${k.revoked_at ? 'revoked ' + k.revoked_at : 'active'}${k.label ? '  ' + k.label : ''}\n`,
          );
    });

  keys
    .command('revoke <id>')
    .description('Revoke a key: it stops working at once')
    .action(async (id: string, _flags: unknown, cmd: Command) => {
      const k = await withStore(cmd, (s) => s.revokeKey(id));
      out.stdout.write(`${k.id} revoked\n`);
    });

  keys
    .command('credit <id> <n>')
    .description('Add N credits to a key (negative removes; refused if it would go below 0); id may also be jwt:<sub>')
    .action(async (id: string, n: string, _flags: unknown, cmd: Command) => {
      const after = await withStore(cmd, (s) => s.creditAccount(id, Number(n)));
      out.stdout.write(`${id}: ${after} credits\n`);
    });

  const ledger = serve.command('ledger').description('Check the credits ledger of the server in --data-dir');
  ledger
    .command('verify')
    .description('Reconcile balances with the ledger: exit 1 if a balance differs from grants - charges + refunds, or a reservation is older than its lease')
    .option('--json', 'print JSON')
    .action(async (_f: unknown, cmd: Command) => {
      const flags = cmd.optsWithGlobals<{ json?: boolean; dataDir?: string; config?: string; redis?: string; redisPrefix?: string }>();
      const { verifyLedger, verifyRedisLedger } = await import('../../server/ledger-verify.js');
      const dataDir = dataDirFrom(flags, out.env);
      const report = redisFrom(flags)
        ? await withStore(cmd, (s) => verifyRedisLedger(s as import('../../server/redis-accounts.js').RedisAccountStore, Date.now(), dataDir))
        : await verifyLedger(dataDir);
      if (flags.json) out.stdout.write(JSON.stringify(report) + '\n');
      else {
        for (const p of report.problems) out.stdout.write(`mismatch: ${p}\n`);
        out.stdout.write(
          `${report.ok ? 'ok' : 'FAILED'}: ${report.accounts} accounts, ${report.entries} ledger entries, ${report.openHolds} open reservations${report.parkedJobs ? ` (${report.parkedJobs} of pending jobs, resumed on the next start)` : ''}${report.unappliedBytes ? `, ${report.unappliedBytes} bytes of unapplied ledger tail (dropped on the next change)` : ''}\n`,
        );
      }
      if (!report.ok) setExit(1);
    });

  serve
    .command('status')
    .description('Cluster status (--redis): workers seen in the last 30 s, queue depths per operation, jobs in flight')
    .option('--json', 'print JSON')
    .action(async (_f: unknown, cmd: Command) => {
      const flags = cmd.optsWithGlobals<{ json?: boolean; dataDir?: string; config?: string; redis?: string; redisPrefix?: string }>();
      const redis = redisFrom(flags);
      if (!redis) throw new ImgtoolError('invalid_parameter', 'serve status needs --redis redis://host:port');
      const { clusterStatus } = await import('../../server/cluster/status.js');
      const st = await clusterStatus(redis.url, redis.prefix ?? 'imgtool:');
      if (flags.json) {
        out.stdout.write(`${JSON.stringify(st)}\n`);
        return;
      }
      out.stdout.write(`workers: ${st.workers.length}\n`);
      for (const w of st.workers)
        out.stdout.write(
          `  ${w.id}  ${w.running}/${w.concurrency} running  ${w.operations.join(',')}  seen ${Math.round((Date.now() - w.seen_at) / 1000)} s ago\n`,
        );
      out.stdout.write(`queues (waiting / active):\n`);
      for (const [op, c] of Object.entries(st.queues)) out.stdout.write(`  ${op.padEnd(26)} ${String(c.waiting ?? 0).padStart(5)} / ${c.active ?? 0}\n`);
      out.stdout.write(`jobs in flight: ${st.inFlight}\n`);
      const j = st.asyncJobs;
      out.stdout.write(`async jobs: ${j.pending} pending, ${j.running} running; ${j.completed} completed and ${j.failed} failed so far\n`);
    });

  serve
    .command('migrate')
    .description(
      "Copy a single-node data dir's keys (hashes, scopes, revocations) and balances into Redis (--redis), each balance as one ledger grant; keys already in Redis are left alone",
    )
    .action(async (_f: unknown, cmd: Command) => {
      const flags = cmd.optsWithGlobals<{ dataDir?: string; config?: string; redis?: string; redisPrefix?: string }>();
      if (!redisFrom(flags))
        throw new ImgtoolError('invalid_parameter', 'serve migrate needs --redis redis://host:port (the target) and --data-dir (the source)');
      const { KeyStore } = await import('../../server/keys.js');
      const source = await (await new KeyStore(dataDirFrom(flags, out.env)).init()).snapshot();
      if (Object.keys(source.holds).length) {
        throw new ImgtoolError(
          'invalid_parameter',
          `${dataDirFrom(flags, out.env)} has ${Object.keys(source.holds).length} open credit reservation(s): stop its server (they are refunded or resumed on its next start) and run it once more before migrating`,
        );
      }
      const { copied, skipped } = await withStore(cmd, async (s) => {
        const r = s as import('../../server/redis-accounts.js').RedisAccountStore;
        let copied = 0;
        let skipped = 0;
        for (const k of source.keys) (await r.importKey(k)) ? copied++ : skipped++;
        for (const [id, sub] of Object.entries(source.subjects)) (await r.importSubject(id, sub.credits)) ? copied++ : skipped++;
        return { copied, skipped };
      });
      out.stdout.write(`migrated ${copied} account(s) into Redis${skipped ? `; ${skipped} already there, left alone` : ''}\n`);
    });
}

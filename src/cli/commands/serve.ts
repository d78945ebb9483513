import type { Command } from 'commander';
import { ImgtoolError } from '../../errors.js';
import { serverOptionsFrom } from '../../server/server-options.js';
import { defaultDataDir, type Settings, wholeNumberFlag } from '../../server/settings.js';
import { addSettingOptions, resolveSettings } from '../../server/settings-sources.js';
import type { AdminStore } from '../../server/backends.js';
import type { AccountStore } from '../../server/stores.js';

/**
 * `imgtool serve`: runs the v1 API server, and `imgtool serve keys ...` manages its API keys.
 * Every flag, its environment variable, config-file key and default come from
 * server/settings.ts (default < --config file < environment < flag).
 */

export { defaultDataDir };

interface Out {
  stdout: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
  /** The CLI's interrupt signal (main.ts turns SIGINT/SIGTERM into it); without one, serve installs its own handlers. */
  signal?: AbortSignal;
  /** Set to the exit code a subcommand ends with (the CLI's io object). */
  exitCode?: number;
}

export function registerServeCommand(program: Command, io?: Partial<Out>): void {
  const out: Out = { stdout: io?.stdout ?? process.stdout, env: io?.env ?? process.env, signal: io?.signal };
  const setExit = (code: number) => {
    if (io) io.exitCode = code;
    else process.exitCode = code;
  };
  /** The settings of `serve` and of its subcommands (which take --data-dir, --config and --redis from serve's line). */
  const settingsOf = (cmd: Command): Settings => resolveSettings('serve', cmd.optsWithGlobals(), out.env);
  const serve = program
    .command('serve')
    .summary('Run the v1 API server')
    .description(
      `Serves the v1 API (interface.md) over HTTP from this machine's pipelines. Keys, credits, jobs and results live in --data-dir (default ${defaultDataDir(out.env)}). Create a key first with \`imgtool serve keys create\`.`,
    );
  addSettingOptions(serve, 'serve', out.env);
  serve.action(async (_flags: unknown, cmd: Command) => {
    const settings = settingsOf(cmd);
    const { startServer } = await import('../../server/listen.js');
    const { url, close } = await startServer({ ...serverOptionsFrom(settings), handleSignals: !out.signal });
    // Graceful stop: in-flight requests finish, running jobs go back to pending for the next start.
    out.signal?.addEventListener(
      'abort',
      () =>
        void close().then(async () => {
          if (settings.redis) (await import('../../server/cluster/closing.js')).exitWhenStuck();
        }),
      { once: true },
    );
    out.stdout.write(`imgtool serve listening on ${url} (data in ${settings.dataDir})\n`);
  });

  const keys = serve.command('keys').description('Manage the API keys of the server in --data-dir (give --data-dir/--config as for serve)');
  // --data-dir, --config and --redis belong to `serve`; commander parses them anywhere on the line.
  // The admin commands work on whichever backend the server uses: the data dir's files, or Redis with --redis.
  const withStore = async <T>(cmd: Command, fn: (s: AdminStore) => Promise<T>): Promise<T> => {
    const s = settingsOf(cmd);
    const { withAdminStore } = await import('../../server/backends.js');
    return withAdminStore({ dataDir: s.dataDir, redis: s.redis ? { url: s.redis, prefix: s.redisPrefix } : undefined }, fn);
  };
  const withAccounts = <T>(cmd: Command, fn: (s: AccountStore) => Promise<T>): Promise<T> => withStore(cmd, (a) => fn(a.store));

  keys
    .command('create')
    .description('Create a key and print it once (only its hash is stored)')
    .option('--scopes <list>', 'comma-separated scopes', 'imaging:read,imaging:write')
    .option('--credits <n>', 'starting credit balance', '0')
    .option('--label <text>', 'a note to recognise the key by')
    .option('--json', 'print JSON')
    .action(async (flags: { scopes: string; credits: string; label?: string; json?: boolean }, cmd: Command) => {
      const { key, record } = await withAccounts(cmd, (s) =>
        s.createKey({ scopes: flags.scopes.split(','), credits: wholeNumberFlag(flags.credits, '--credits', 0), label: flags.label }),
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
      const list = await withAccounts(cmd, (s) => s.listKeys());
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
      const k = await withAccounts(cmd, (s) => s.revokeKey(id));
      out.stdout.write(`${k.id} revoked\n`);
    });

  keys
    .command('credit <id> <n>')
    .description('Add N credits to a key (negative removes; refused if it would go below 0); id may also be jwt:<sub>')
    .action(async (id: string, n: string, _flags: unknown, cmd: Command) => {
      const after = await withAccounts(cmd, (s) => s.creditAccount(id, Number(n)));
      out.stdout.write(`${id}: ${after} credits\n`);
    });

  const ledger = serve.command('ledger').description('Check the credits ledger of the server in --data-dir');
  ledger
    .command('verify')
    .description('Reconcile balances with the ledger: exit 1 if a balance differs from grants - charges + refunds, or a reservation is older than its lease')
    .option('--json', 'print JSON')
    .action(async (flags: { json?: boolean }, cmd: Command) => {
      const { verifyLedger, verifyRedisLedger } = await import('../../server/ledger-verify.js');
      const dataDir = settingsOf(cmd).dataDir;
      const report = await withStore(cmd, (a) => (a.kind === 'redis' ? verifyRedisLedger(a.store, Date.now(), dataDir) : verifyLedger(dataDir)));
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
    .action(async (flags: { json?: boolean }, cmd: Command) => {
      const { redis, redisPrefix } = settingsOf(cmd);
      if (!redis) throw new ImgtoolError('invalid_parameter', 'serve status needs --redis redis://host:port');
      const { clusterStatus } = await import('../../server/cluster/status.js');
      const st = await clusterStatus(redis, redisPrefix);
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
      const { redis, dataDir } = settingsOf(cmd);
      if (!redis) throw new ImgtoolError('invalid_parameter', 'serve migrate needs --redis redis://host:port (the target) and --data-dir (the source)');
      const { KeyStore } = await import('../../server/keys.js');
      const source = await (await new KeyStore(dataDir).init()).snapshot();
      if (Object.keys(source.holds).length) {
        throw new ImgtoolError(
          'invalid_parameter',
          `${dataDir} has ${Object.keys(source.holds).length} open credit reservation(s): stop its server (they are refunded or resumed on its next start) and run it once more before migrating`,
        );
      }
      const { copied, skipped } = await withStore(cmd, async (a) => {
        if (a.kind !== 'redis') throw new ImgtoolError('internal_error', 'serve migrate: the target store is not Redis');
        let copied = 0;
        let skipped = 0;
        for (const k of source.keys) (await a.store.importKey(k)) ? copied++ : skipped++;
        for (const [id, sub] of Object.entries(source.subjects)) (await a.store.importSubject(id, sub.credits)) ? copied++ : skipped++;
        return { copied, skipped };
      });
      out.stdout.write(`migrated ${copied} account(s) into Redis${skipped ? `; ${skipped} already there, left alone` : ''}\n`);
    });
}

import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance, LogController } from 'fastify';
import type { Billing } from './billing.js';
import type { IdempotencyStore, AccountStore } from './stores.js';
import type { Jobs } from './jobs.js';
import type { LeaseKeeper } from './leases.js';
import authPlugin from './plugins/auth.js';
import billingPlugin from './plugins/billing.js';
import clusterPlugin from './plugins/cluster.js';
import httpPlugin from './plugins/http.js';
import jobsPlugin from './plugins/jobs.js';
import pipelinesPlugin from './plugins/pipelines.js';
import resultsPlugin from './plugins/results.js';
import routesPlugin from './plugins/routes.js';
import storesPlugin from './plugins/stores.js';
import sweepPlugin from './plugins/sweep.js';
import type { RequestLimiter } from './limiter.js';
import type { ResultStore } from './results.js';
import { type ResolvedServerOptions, resolveServerOptions, type ServerOptions } from './server-options.js';
import { installTransportGuards, transportServerOptions } from './transport.js';

/**
 * The v1 API server: fastify and a short list of plugins (server/plugins/), each owning its
 * decorators and its teardown. Registration order is dependency order, and fastify closes
 * them in reverse: the sweep timer, jobs, pipelines, leases, the cluster's workers and queues,
 * and the stores last.
 */

export type { ServerOptions } from './server-options.js';

/** The server's parts in one object, for tests and admin code (the same objects as the plugins' decorators). */
export interface ImgtoolServer {
  keys: AccountStore;
  billing: Billing;
  leases: LeaseKeeper;
  idempotency: IdempotencyStore;
  jobs: Jobs;
  results: ResultStore;
  pool: RequestLimiter;
  /** Deletes expired results and jobs now. */
  sweep: () => Promise<void>;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every setting resolved, defaults applied (settings.ts). */
    settings: ResolvedServerOptions;
    imgtool: ImgtoolServer;
  }
}

export async function buildServer(options: ServerOptions): Promise<FastifyInstance> {
  const o = resolveServerOptions(options);
  const app = Fastify({
    logger: o.logger,
    genReqId: () => randomUUID(),
    // One line per request from the http plugin's onResponse hook instead of fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    ...transportServerOptions(o.timeouts),
  });
  installTransportGuards(app, o.timeouts, o.dataDir);
  app.decorate('settings', o);

  try {
    await app.register(storesPlugin);
    await app.register(clusterPlugin);
    await app.register(billingPlugin);
    await app.register(resultsPlugin);
    await app.register(pipelinesPlugin);
    await app.register(jobsPlugin);
    await app.register(authPlugin);
    await app.register(httpPlugin);
    await app.register(routesPlugin);
    await app.register(sweepPlugin);
    const { stores, billing, leases, jobs, results, pool, sweep } = app;
    app.decorate('imgtool', { keys: stores.keys, idempotency: stores.idempotency, billing, leases, jobs, results, pool, sweep });

    // Jobs resume only once every route exists, so a re-queued job can finish before listen().
    // Recovery adopts the holds of the jobs it resumes before the first lease sweep can refund them.
    await jobs.init();
    await leases.start();
    await leases.sweep();
    await sweep();
  } catch (err) {
    // A plugin failed (a JWKS file missing, Redis gone): close what the others opened, then report it.
    await app.close().catch(() => {});
    throw err;
  }
  return app;
}

import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import fp from 'fastify-plugin';
import { Billing } from '../billing.js';
import { LeaseKeeper } from '../leases.js';

/**
 * Credit holds and their leases: decorates `app.leases` (which also owns this instance's temp
 * dir, `app.leases.tmpDir`) and `app.billing` (hold, run, settle or release). Stops the lease
 * timers on close.
 */

declare module 'fastify' {
  interface FastifyInstance {
    leases: LeaseKeeper;
    billing: Billing;
  }
}

export default fp(
  async (app) => {
    const o = app.settings;
    const { keys, idempotency } = app.stores;
    const leases = new LeaseKeeper({ holds: keys, idempotency, tmpRoot: join(o.dataDir, 'tmp'), leaseMs: o.leaseMs, log: app.log });
    // Pipelines' temp files go in this instance's own directory, which the sweep removes once this instance is gone.
    await mkdir(leases.tmpDir, { recursive: true, mode: 0o700 });
    app.decorate('leases', leases);
    app.decorate('billing', new Billing(keys, leases));
    app.addHook('onClose', async () => leases.stop());
  },
  { name: 'imgtool-billing', dependencies: ['imgtool-stores'] },
);

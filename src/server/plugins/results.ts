import fp from 'fastify-plugin';
import { loadSecret, ResultStore } from '../results.js';

/** Signed, expiring result files in the data dir: decorates `app.results`. */

declare module 'fastify' {
  interface FastifyInstance {
    results: ResultStore;
  }
}

export default fp(
  async (app) => {
    const o = app.settings;
    app.decorate('results', await new ResultStore(o.dataDir, await loadSecret(o.dataDir), o.clock, o.resultTtlMs).init());
  },
  { name: 'imgtool-results', decorators: { fastify: ['settings'] } },
);

import type { onRequestHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { type Authenticate, type Credential, createAuthenticator, requireScope } from '../auth.js';

/**
 * API keys and bearer JWTs: decorates `app.authenticate` (headers -> credential) and
 * `app.requireScope(scope)`, the onRequest hook a route uses to authenticate and check its scope.
 */

declare module 'fastify' {
  interface FastifyRequest {
    credential?: Credential;
  }
  interface FastifyInstance {
    authenticate: Authenticate;
    requireScope: (scope: string) => onRequestHookHandler;
  }
}

export default fp(
  async (app) => {
    const authenticate = await createAuthenticator(app.stores.keys, app.settings.jwt);
    app.decorate('authenticate', authenticate);
    app.decorate(
      'requireScope',
      (scope: string): onRequestHookHandler =>
        async (req) => {
          const cred = await authenticate(req.headers);
          req.credential = cred;
          requireScope(cred, scope);
        },
    );
  },
  { name: 'imgtool-auth', dependencies: ['imgtool-stores'] },
);

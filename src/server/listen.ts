import type { FastifyInstance } from 'fastify';
import { buildServer, type ServerOptions } from './app.js';

/**
 * Starts a server on a socket and wires graceful shutdown: on SIGTERM/SIGINT it stops
 * accepting connections, lets in-flight requests finish, puts running jobs back to pending
 * (they resume on the next start) and exits.
 */
export interface ListenOptions extends ServerOptions {
  port: number;
  host: string;
  /** Install SIGTERM/SIGINT handlers (the CLI does; tests do not). */
  handleSignals?: boolean;
}

export async function startServer(o: ListenOptions): Promise<{ app: FastifyInstance; url: string; close: () => Promise<void> }> {
  const app = await buildServer(o);
  const address = await app.listen({ port: o.port, host: o.host });
  let closing: Promise<void> | undefined;
  const close = () => (closing ??= app.close());
  if (o.handleSignals) {
    const onSignal = (sig: NodeJS.Signals) => {
      app.log.info({ signal: sig }, 'shutting down: finishing in-flight requests');
      close().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    };
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
  }
  return { app, url: address, close };
}

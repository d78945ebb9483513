import { SETTINGS } from './settings.js';

/** The server's transport timeouts (enforced in transport.ts), kept apart so the CLI can show the defaults without loading the server. */
export interface TimeoutOptions {
  /** The request line and headers must arrive within this (ms). Default 20 s. */
  headersMs?: number;
  /** Longest silence allowed while a request body is arriving (ms). Default 15 s. */
  bodyIdleMs?: number;
  /** The whole request, body included, must arrive within this (ms). Default 300 s. */
  requestMs?: number;
  /** An idle keep-alive connection is closed after this (ms). Default 65 s. */
  keepAliveMs?: number;
}

/** From the settings table (seconds there). */
export const TIMEOUT_DEFAULTS = {
  headersMs: SETTINGS.headerTimeout.default * 1000,
  bodyIdleMs: SETTINGS.bodyTimeout.default * 1000,
  requestMs: SETTINGS.requestTimeout.default * 1000,
  keepAliveMs: SETTINGS.keepAliveTimeout.default * 1000,
} as const;

export function timeoutsWithDefaults(o: TimeoutOptions = {}): Required<TimeoutOptions> {
  return {
    headersMs: o.headersMs ?? TIMEOUT_DEFAULTS.headersMs,
    bodyIdleMs: o.bodyIdleMs ?? TIMEOUT_DEFAULTS.bodyIdleMs,
    requestMs: o.requestMs ?? TIMEOUT_DEFAULTS.requestMs,
    keepAliveMs: o.keepAliveMs ?? TIMEOUT_DEFAULTS.keepAliveMs,
  };
}

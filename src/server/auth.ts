import { readFile } from 'node:fs/promises';
import { createLocalJWKSet, createRemoteJWKSet, jwtVerify, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';
import { ImgtoolError } from '../errors.js';
import type { AccountStore } from './stores.js';

/**
 * Who is calling: an X-API-KEY secret from the key store, or an OAuth 2.0 bearer JWT verified
 * against the operator's issuer, audience and JWKS (imgtool is only a resource server). A
 * credential's id (key_... or jwt:<sub>) is what logs, rate limits and the ledger see; the
 * secret itself never leaves this module.
 */

export interface Credential {
  id: string;
  kind: 'key' | 'jwt';
  scopes: readonly string[];
}

export interface JwtOptions {
  issuer: string;
  audience: string;
  /** JWKS URL (https://.../.well-known/jwks.json) or a local JSON file with {keys: [...]}. */
  jwks: string;
  /** Accepted signing algorithms; default asymmetric ones only. */
  algorithms?: string[];
  /** Accept tokens without an exp claim. Default false: such a token would be valid forever. */
  allowNoExp?: boolean;
}

export type Authenticate = (headers: Record<string, string | string[] | undefined>) => Promise<Credential>;

const unauthorized = (why: string) => new ImgtoolError('invalid_auth_token', why);

async function keySet(jwks: string): Promise<JWTVerifyGetKey> {
  if (/^https?:\/\//.test(jwks)) return createRemoteJWKSet(new URL(jwks));
  return createLocalJWKSet(JSON.parse(await readFile(jwks, 'utf8')) as JSONWebKeySet);
}

export async function createAuthenticator(keys: AccountStore, jwt?: JwtOptions): Promise<Authenticate> {
  const getKey = jwt ? await keySet(jwt.jwks) : undefined;
  return async (headers) => {
    const apiKey = headers['x-api-key'];
    const authz = headers.authorization;
    if (typeof apiKey === 'string' && apiKey) {
      const rec = await keys.verifyKey(apiKey.trim());
      if (!rec) throw unauthorized('the API key is unknown or revoked; check X-API-KEY');
      return { id: rec.id, kind: 'key', scopes: rec.scopes };
    }
    if (typeof authz === 'string' && /^bearer\s+/i.test(authz)) {
      if (!jwt || !getKey) throw unauthorized('this server does not accept bearer tokens; use an X-API-KEY');
      const token = authz.replace(/^bearer\s+/i, '').trim();
      try {
        const { payload } = await jwtVerify(token, getKey, {
          issuer: jwt.issuer,
          audience: jwt.audience,
          algorithms: jwt.algorithms ?? ['RS256', 'RS384', 'RS512', 'PS256', 'ES256', 'ES384', 'EdDSA'],
          requiredClaims: jwt.allowNoExp ? [] : ['exp'],
        });
        if (!payload.sub) throw unauthorized('the bearer token has no sub claim');
        const raw = payload.scope ?? payload.scp;
        const scopes = typeof raw === 'string' ? raw.split(/\s+/).filter(Boolean) : Array.isArray(raw) ? raw.map(String) : [];
        return { id: `jwt:${payload.sub}`, kind: 'jwt', scopes };
      } catch (err) {
        if (err instanceof ImgtoolError) throw err;
        const claim = err as { claim?: string; reason?: string };
        if (claim.claim === 'exp' && claim.reason === 'missing')
          throw unauthorized('the bearer token has no exp claim; this server refuses tokens that never expire');
        throw unauthorized(`the bearer token was rejected (${(err as { code?: string }).code ?? 'invalid'})`);
      }
    }
    throw unauthorized('missing credentials: send X-API-KEY: sk_... or Authorization: Bearer <token>');
  };
}

export function requireScope(cred: Credential, scope: string): void {
  if (!cred.scopes.includes(scope)) {
    throw new ImgtoolError(
      'insufficient_scope',
      `this endpoint needs the ${scope} scope; the credential has ${cred.scopes.length ? cred.scopes.join(', ') : 'none'}`,
    );
  }
}

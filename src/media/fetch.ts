import { lookup as dnsLookup } from 'node:dns/promises';
import { createWriteStream } from 'node:fs';
import { unlink } from 'node:fs/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { Agent, request } from 'undici';
import { ImgtoolError, type ErrorCode } from '../errors.js';
import { mb } from './image.js';

/**
 * The one URL downloader, used by the server for image_url/video_url and by the CLI for URL
 * inputs. It never lets a URL reach the server's own network (SSRF) unless `allowPrivate`:
 * http(s) only; every host name is resolved here and each address checked against the
 * loopback/private/link-local/metadata ranges; the connection is pinned to the checked address
 * (so a second DNS answer cannot swap in 127.0.0.1); redirects are followed by hand and each hop
 * is checked again; the body is streamed and aborted the moment it passes the size limit, and
 * the whole download has a deadline besides the connect/headers/idle-body timeouts.
 */

export interface FetchOptions {
  maxBytes: number;
  /** Error code for a refused URL: invalid_image_url or invalid_video_url. */
  urlCode: Extract<ErrorCode, 'invalid_image_url' | 'invalid_video_url'>;
  /** Field name for messages, e.g. "image_url" (the CLI passes the URL itself). */
  field: string;
  /** Operation named in the size-limit message; default "this operation". */
  operation?: string;
  /** The CLI fetches the user's own URLs and allows their local network; the server does not. */
  allowPrivate?: boolean;
  /** Whole-download deadline; default 30 s. */
  timeoutMs?: number;
  maxRedirects?: number;
  signal?: AbortSignal;
  userAgent?: string;
  /** Write to this file instead of returning a buffer (video). */
  toFile?: string;
  /** Replaceable for tests: resolves a host to its addresses. */
  resolve?: (host: string) => Promise<string[]>;
  /** Replaceable for tests: whether an address is refused. */
  isBlocked?: (address: string) => boolean;
}

export interface Fetched {
  data?: Buffer;
  file?: string;
  size: number;
  contentType?: string;
  finalUrl: string;
}

/** Cloud metadata services that sit outside the reserved ranges (e.g. AWS IPv6, Alibaba). */
const METADATA = new Set(['fd00:ec2::254', '100.100.100.200', '169.254.169.254', '169.254.170.2']);

const v4 = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 255, lo >> 8, lo & 255]);
const NAT64 = [ipaddr.parseCIDR('64:ff9b::/96'), ipaddr.parseCIDR('64:ff9b:1::/48')] as const;

/**
 * The IPv4 address an IPv6 address carries, in every standard embedding: IPv4-mapped
 * (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d, deprecated), SIIT (::ffff:0:a.b.c.d), NAT64
 * (64:ff9b::/96 and the local-use 64:ff9b:1::/48), 6to4 (2002:AABB:CCDD::) and Teredo (client
 * address inverted in the last 32 bits).
 */
export function embeddedIPv4(a: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  const p = a.parts;
  if (a.isIPv4MappedAddress()) return a.toIPv4Address();
  if (p.slice(0, 6).every((x) => x === 0)) return v4(p[6]!, p[7]!);
  if (p.slice(0, 4).every((x) => x === 0) && p[4] === 0xffff && p[5] === 0) return v4(p[6]!, p[7]!);
  if (NAT64.some(([net, bits]) => a.match(net, bits))) return v4(p[6]!, p[7]!);
  if (p[0] === 0x2002) return v4(p[1]!, p[2]!);
  if (p[0] === 0x2001 && p[1] === 0) return v4(~p[6]! & 0xffff, ~p[7]! & 0xffff);
  return undefined;
}

/**
 * ipaddr.js reads any dotted tail as IPv4-mapped ("::8.8.8.8" becomes ::ffff:808:808), so IPv6
 * text goes through the WHATWG URL parser first, which writes it in canonical hex.
 */
function canonical(address: string): string {
  if (!address.includes(':') || !address.includes('.')) return address;
  try {
    return new URL(`http://[${address}]/`).hostname.slice(1, -1);
  } catch {
    return address;
  }
}

export function isBlockedAddress(address: string): boolean {
  address = canonical(address);
  if (!ipaddr.isValid(address)) return true;
  const addr = ipaddr.parse(address);
  if (addr.kind() === 'ipv6') {
    const inner = embeddedIPv4(addr as ipaddr.IPv6);
    if (inner && isBlockedAddress(inner.toString())) return true;
    // IPv4-compatible addresses (::/96) are deprecated (RFC 4291) and never a legitimate public host.
    if ((addr as ipaddr.IPv6).parts.slice(0, 6).every((x) => x === 0)) return true;
    // ::ffff:a.b.c.d is an ordinary IPv4 connection: the IPv4 verdict above is the whole answer.
    if ((addr as ipaddr.IPv6).isIPv4MappedAddress()) return false;
  }
  if (METADATA.has(addr.toString())) return true;
  // Only ordinary public unicast is allowed: private, loopback, link-local, CGNAT, ULA,
  // translation prefixes (NAT64, 6to4, Teredo, even around a public v4) and reserved ranges are all refused.
  return addr.range() !== 'unicast';
}

const describeUrl = (raw: string) => (raw.length <= 80 ? JSON.stringify(raw) : `${JSON.stringify(raw.slice(0, 80))}... (${raw.length} characters)`);

async function defaultResolve(host: string): Promise<string[]> {
  const all = await dnsLookup(host, { all: true, verbatim: true });
  return all.map((a) => a.address);
}

type LookupCb = (err: Error | null, address: string | { address: string; family: number }[], family?: number) => void;

/** A lookup for net/tls.connect that only ever answers the address we already checked. */
function pinnedLookup(address: string) {
  const family = isIP(address);
  return (_host: string, opts: { all?: boolean } | LookupCb, cb?: LookupCb) => {
    const callback = (typeof opts === 'function' ? opts : cb)!;
    if (typeof opts === 'object' && opts.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  };
}

export async function fetchUrl(raw: string, o: FetchOptions): Promise<Fetched> {
  const refuse = (why: string) => new ImgtoolError(o.urlCode, `${o.field} ${why}`, { field: o.field });
  const resolve = o.resolve ?? defaultResolve;
  const blocked = o.isBlocked ?? isBlockedAddress;
  const timeout = AbortSignal.timeout(o.timeoutMs ?? 30_000);
  const signal = o.signal ? AbortSignal.any([o.signal, timeout]) : timeout;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refuse(`is not a valid URL: ${describeUrl(raw)}`);
  }

  for (let hop = 0; ; hop++) {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw refuse(`must be an http or https URL, got ${url.protocol.replace(':', '')}`);
    if (url.username || url.password) throw refuse('must not carry credentials');
    const host = url.hostname.replace(/^\[|\]$/g, '');
    let addresses: string[];
    try {
      addresses = isIP(host) ? [host] : await resolve(host);
    } catch (err) {
      throw new ImgtoolError('fetch_failed', `${o.field}: could not resolve ${host} (${(err as NodeJS.ErrnoException).code ?? 'DNS error'})`, {
        cause: err,
        field: o.field,
      });
    }
    if (!addresses.length) throw new ImgtoolError('fetch_failed', `${o.field}: ${host} has no address`, { field: o.field });
    // Every answer must be public: a mixed answer is how rebinding attacks hide a private address.
    if (!o.allowPrivate && addresses.some(blocked)) {
      throw refuse(`points to a private, loopback, link-local or metadata address (${host}); give a public URL`);
    }
    const pinned = addresses[0]!;
    const agent = new Agent({ connect: { lookup: pinnedLookup(pinned) as never, timeout: 10_000 }, headersTimeout: 15_000, bodyTimeout: 15_000 });
    try {
      let res: Awaited<ReturnType<typeof request>>;
      try {
        res = await request(url, { method: 'GET', dispatcher: agent, signal, headers: { 'user-agent': o.userAgent ?? 'imgtool', accept: '*/*' } });
      } catch (err) {
        if (timeout.aborted)
          throw new ImgtoolError('fetch_failed', `${o.field}: download timed out after ${(o.timeoutMs ?? 30_000) / 1000} s`, { field: o.field });
        if (o.signal?.aborted) throw new ImgtoolError('job_cancelled', 'cancelled');
        throw new ImgtoolError(
          'fetch_failed',
          `${o.field}: could not download ${url.host} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
          { cause: err, field: o.field },
        );
      }
      if (res.statusCode >= 300 && res.statusCode < 400 && res.headers.location) {
        await res.body.dump().catch(() => {});
        if (hop >= (o.maxRedirects ?? 5)) throw new ImgtoolError('fetch_failed', `${o.field}: too many redirects`, { field: o.field });
        url = new URL(String(res.headers.location), url);
        continue;
      }
      if (res.statusCode !== 200) {
        await res.body.dump().catch(() => {});
        throw new ImgtoolError('fetch_failed', `${o.field}: ${url.host} answered HTTP ${res.statusCode}`, { field: o.field });
      }
      const declared = Number(res.headers['content-length']);
      const tooLarge = () =>
        new ImgtoolError('file_size_too_large', `${o.field} is larger than ${mb(o.maxBytes)}, the limit for ${o.operation ?? 'this operation'}`, {
          field: o.field,
        });
      if (Number.isFinite(declared) && declared > o.maxBytes) {
        res.body.destroy();
        throw tooLarge();
      }
      const contentType = typeof res.headers['content-type'] === 'string' ? res.headers['content-type'] : undefined;
      return await readBody(res.body, o, tooLarge, contentType, url.href, signal);
    } finally {
      agent.close().catch(() => {});
    }
  }
}

async function readBody(
  body: AsyncIterable<Buffer> & { destroy: (e?: Error) => void },
  o: FetchOptions,
  tooLarge: () => ImgtoolError,
  contentType: string | undefined,
  finalUrl: string,
  signal: AbortSignal,
): Promise<Fetched> {
  let size = 0;
  const chunks: Buffer[] = [];
  const out = o.toFile ? createWriteStream(o.toFile, { mode: 0o600 }) : undefined;
  try {
    for await (const chunk of body) {
      size += chunk.length;
      if (size > o.maxBytes) {
        body.destroy();
        throw tooLarge();
      }
      if (out) {
        if (!out.write(chunk)) await new Promise<void>((r) => out.once('drain', r));
      } else chunks.push(chunk);
    }
    if (out) await new Promise<void>((r, j) => out.end((err?: Error | null) => (err ? j(err) : r())));
  } catch (err) {
    out?.destroy();
    if (o.toFile) await unlink(o.toFile).catch(() => {});
    if (err instanceof ImgtoolError) throw err;
    if (signal.aborted && !o.signal?.aborted) throw new ImgtoolError('fetch_failed', `${o.field}: download timed out`, { field: o.field });
    if (o.signal?.aborted) throw new ImgtoolError('job_cancelled', 'cancelled');
    throw new ImgtoolError('fetch_failed', `${o.field}: download failed (${(err as Error).message})`, { cause: err, field: o.field });
  }
  return o.toFile ? { file: o.toFile, size, contentType, finalUrl } : { data: Buffer.concat(chunks, size), size, contentType, finalUrl };
}

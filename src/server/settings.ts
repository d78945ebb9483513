import { join } from 'node:path';
import { z } from 'zod';
import { imgtoolHome } from '../config.js';
import { ImgtoolError } from '../errors.js';

/**
 * Every setting of `imgtool serve` and `imgtool worker`, once: its type, default, description,
 * environment variable and config-file key. The commander options, the `--config` file's
 * validation, the environment and the defaults are all derived from this table (like vitest's
 * typed CLI option table), so adding a setting is one entry here plus, if the server needs a
 * new value, one line where it is used. The flag is the key in kebab-case (`holdLease` ->
 * `--hold-lease`); the config key is the key itself unless `config` says otherwise.
 *
 * Precedence: default < --config file < environment < flag. settings-sources.ts reads the four
 * sources (and makes the commander options and the docs tables); server-options.ts turns the
 * result into buildServer's options and holds their defaults.
 */

export type SettingsCommand = 'serve' | 'worker';

/** How a setting's value is written and checked: the zod schema, how a flag or env string becomes a value, and the words for errors. */
export interface SettingType<T> {
  schema: z.ZodType<T>;
  /** Converts a flag's or environment variable's string (booleans from commander arrive as true). */
  fromString: (s: string | true) => unknown;
  /** What a valid value is, for one-line errors: "a whole number >= 1". */
  expects: string;
}

const toNumber = (s: string | true) => (s === true || s.trim() === '' ? Number.NaN : Number(s));

function wholeNumber(min: number, max?: number): SettingType<number> {
  const base = z.number().int().min(min);
  return {
    schema: max === undefined ? base : base.max(max),
    fromString: toNumber,
    expects: max === undefined ? `a whole number >= ${min}` : `a whole number from ${min} to ${max}`,
  };
}

/** Seconds, fractions allowed (tests and tight setups go below a second). */
function seconds(min: { above: number } | { atLeast: number }, max?: number): SettingType<number> {
  const lower = 'above' in min ? z.number().gt(min.above) : z.number().min(min.atLeast);
  const low = 'above' in min ? `> ${min.above}` : `>= ${min.atLeast}`;
  return {
    schema: max === undefined ? lower.finite() : lower.max(max),
    fromString: toNumber,
    expects: max === undefined ? `a number of seconds ${low}` : `a number of seconds from ${'above' in min ? min.above : min.atLeast} to ${max}`,
  };
}

/** A whole-number flag outside the table (e.g. `keys create --credits`), checked and worded as the table's are. */
export function wholeNumberFlag(v: string, flag: string, min: number): number {
  const t = wholeNumber(min);
  const r = t.schema.safeParse(t.fromString(v));
  if (!r.success) throw new ImgtoolError('invalid_parameter', `${flag} must be ${t.expects}, got ${JSON.stringify(v)}`);
  return r.data;
}

const text: SettingType<string> = { schema: z.string().min(1), fromString: String, expects: 'a non-empty string' };

const onOff: SettingType<boolean> = {
  schema: z.boolean(),
  fromString: (s) => (s === true || s === 'true' || s === '1' ? true : s === 'false' || s === '0' ? false : s),
  expects: 'true or false',
};

function oneOf<const T extends readonly [string, ...string[]]>(choices: T): SettingType<T[number]> {
  return { schema: z.enum(choices), fromString: String, expects: `one of ${choices.join(', ')}` };
}

const redisUrl: SettingType<string> = {
  schema: z.string().regex(/^rediss?:\/\//),
  fromString: String,
  expects: 'a redis:// or rediss:// URL',
};

const nameList: SettingType<string[]> = {
  schema: z.array(z.string().min(1)).min(1),
  fromString: (s) =>
    String(s)
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean),
  expects: 'a comma-separated list (in a config file, an array of strings)',
};

export interface Setting<T> {
  type: SettingType<T>;
  /** Which commands take it. */
  commands: readonly SettingsCommand[];
  description: string;
  /** Commander's argument placeholder, e.g. `<n>`; absent for on/off switches. */
  arg?: string;
  /** The built-in default, or a function of the environment (the data dir). Absent: unset. */
  default?: T | ((env: NodeJS.ProcessEnv) => T);
  /** How the default reads in help and docs when it is computed ("cores - 1"). */
  defaultText?: string;
  env: string;
  /** Dotted key in the --config file (default: the setting's own key). */
  config?: string;
  /** `imgtool worker` gives this setting another default and description. */
  worker?: { default: T; description: string };
}

/** One entry of the table; keeps whether it has a default in its type, so `Settings` knows which values are always set. */
function setting<T, const X extends Omit<Setting<T>, 'type'>>(type: SettingType<T>, rest: X): X & { type: SettingType<T> } {
  return { ...rest, type };
}

const SERVE = ['serve'] as const;
const WORKER = ['worker'] as const;
const BOTH = ['serve', 'worker'] as const;

export const DEFAULT_REDIS_PREFIX = 'imgtool:';

/** `$IMGTOOL_HOME/server` (else ~/.config/imgtool/server). */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(imgtoolHome(env), 'server');
}

export const SETTINGS = {
  config: setting(text, {
    commands: BOTH,
    arg: '<file>',
    description: 'JSON file with any of the settings below, by their config key (times in seconds); unknown keys and wrong types are refused',
    env: 'IMGTOOL_CONFIG',
  }),
  port: setting(wholeNumber(0, 65535), { commands: SERVE, arg: '<n>', default: 8080, description: 'TCP port (0 picks a free one)', env: 'IMGTOOL_PORT' }),
  host: setting(text, {
    commands: SERVE,
    arg: '<addr>',
    default: '127.0.0.1',
    description: 'address to bind; 0.0.0.0 for every interface',
    env: 'IMGTOOL_HOST',
  }),
  dataDir: setting(text, {
    commands: BOTH,
    arg: '<dir>',
    default: defaultDataDir,
    defaultText: '$IMGTOOL_HOME/server',
    description: 'where keys, ledger, jobs, results and the signing secret are stored (in a cluster: one directory every node shares)',
    env: 'IMGTOOL_DATA_DIR',
  }),
  publicUrl: setting(text, {
    commands: SERVE,
    arg: '<url>',
    defaultText: 'the request Host',
    description: 'base of result URLs when behind a proxy',
    env: 'IMGTOOL_PUBLIC_URL',
  }),
  rateLimit: setting(wholeNumber(0), {
    commands: SERVE,
    arg: '<n>',
    default: 5,
    description: 'requests per second per credential (0 disables); status polls count',
    env: 'IMGTOOL_RATE_LIMIT',
  }),
  allowPrivateUrls: setting(onOff, {
    commands: SERVE,
    default: false,
    description: 'let image_url/video_url reach loopback and private networks (trusted setups only)',
    env: 'IMGTOOL_ALLOW_PRIVATE_URLS',
  }),
  concurrency: setting(wholeNumber(1), {
    commands: BOTH,
    arg: '<n>',
    defaultText: 'cores - 1',
    description: 'pipelines running at once; up to --max-queue more wait, then 503',
    env: 'IMGTOOL_CONCURRENCY',
    worker: { default: 1, description: 'pipelines this worker runs at once' },
  }),
  maxQueue: setting(wholeNumber(0), {
    commands: SERVE,
    arg: '<n>',
    default: 100,
    description: 'requests and jobs waiting for a pipeline before new ones get 503',
    env: 'IMGTOOL_MAX_QUEUE',
  }),
  isolation: setting(oneOf(['threads', 'inline'] as const), {
    commands: BOTH,
    arg: '<mode>',
    default: 'threads',
    description: 'threads: pipelines run on worker threads, so their synchronous work never stalls the event loop; inline: on the main thread',
    env: 'IMGTOOL_ISOLATION',
  }),
  holdLease: setting(seconds({ atLeast: 0.3 }, 3600), {
    commands: SERVE,
    arg: '<seconds>',
    default: 10,
    description:
      'lease of a credit reservation (and of an Idempotency-Key claim), renewed every third of it while the work runs; after a crash it is refunded within ~1.5 leases',
    env: 'IMGTOOL_HOLD_LEASE',
  }),
  jwtIssuer: setting(text, {
    commands: SERVE,
    arg: '<iss>',
    description: 'accept OAuth 2.0 bearer JWTs from this issuer (needs --jwt-audience and --jwt-jwks too)',
    env: 'IMGTOOL_JWT_ISSUER',
    config: 'jwt.issuer',
  }),
  jwtAudience: setting(text, {
    commands: SERVE,
    arg: '<aud>',
    description: 'required audience of bearer JWTs',
    env: 'IMGTOOL_JWT_AUDIENCE',
    config: 'jwt.audience',
  }),
  jwtJwks: setting(text, {
    commands: SERVE,
    arg: '<url|file>',
    description: 'JWKS URL or file used to verify bearer JWTs',
    env: 'IMGTOOL_JWT_JWKS',
    config: 'jwt.jwks',
  }),
  jwtCredits: setting(wholeNumber(0), {
    commands: SERVE,
    arg: '<n>',
    default: 0,
    description: 'credits a new JWT subject starts with, recorded as a grant in the ledger',
    env: 'IMGTOOL_JWT_CREDITS',
    config: 'jwt.subjectCredits',
  }),
  jwtAllowNoExp: setting(onOff, {
    commands: SERVE,
    default: false,
    description: 'accept bearer JWTs without an exp claim (refused by default: such a token never expires)',
    env: 'IMGTOOL_JWT_ALLOW_NO_EXP',
    config: 'jwt.allowNoExp',
  }),
  headerTimeout: setting(seconds({ above: 0 }), {
    commands: SERVE,
    arg: '<s>',
    default: 20,
    description: "seconds for a request's line and headers to arrive, else 408 and close",
    env: 'IMGTOOL_HEADER_TIMEOUT',
  }),
  bodyTimeout: setting(seconds({ above: 0 }), {
    commands: SERVE,
    arg: '<s>',
    default: 15,
    description: 'longest silence while a request body arrives, in seconds, else 408 and close',
    env: 'IMGTOOL_BODY_TIMEOUT',
  }),
  requestTimeout: setting(seconds({ above: 0 }), {
    commands: SERVE,
    arg: '<s>',
    default: 300,
    description: 'seconds for a whole request, body included, to arrive',
    env: 'IMGTOOL_REQUEST_TIMEOUT',
  }),
  keepAliveTimeout: setting(seconds({ above: 0 }), {
    commands: SERVE,
    arg: '<s>',
    default: 65,
    description: 'seconds an idle keep-alive connection is kept',
    env: 'IMGTOOL_KEEP_ALIVE_TIMEOUT',
  }),
  recycleAfter: setting(wholeNumber(0), {
    commands: SERVE,
    arg: '<jobs>',
    default: 200,
    description: 'retire a pipeline thread after this many jobs to give its memory back (0 never)',
    env: 'IMGTOOL_RECYCLE_AFTER',
  }),
  recycleRss: setting(wholeNumber(0), {
    commands: SERVE,
    arg: '<MB>',
    default: 2048,
    description: "retire a pipeline thread that finishes a job while the server's RSS is above this (0 never)",
    env: 'IMGTOOL_RECYCLE_RSS',
  }),
  recycleIdle: setting(seconds({ atLeast: 0 }), {
    commands: SERVE,
    arg: '<s>',
    default: 120,
    description: 'retire a pipeline thread idle this many seconds, so a quiet server shrinks (0 never)',
    env: 'IMGTOOL_RECYCLE_IDLE',
  }),
  log: setting(oneOf(['info', 'warn', 'error', 'silent'] as const), {
    commands: BOTH,
    arg: '<level>',
    default: 'info',
    description: 'log level: info, warn, error or silent',
    env: 'IMGTOOL_LOG',
  }),
  redis: setting(redisUrl, {
    commands: BOTH,
    arg: '<url>',
    description:
      'cluster mode: keep keys, balances, ledger, idempotency records, rate limits and the job queues in this Redis (redis://host:port), shared by every node; required by worker',
    env: 'IMGTOOL_REDIS_URL',
  }),
  redisPrefix: setting(text, {
    commands: BOTH,
    arg: '<prefix>',
    default: DEFAULT_REDIS_PREFIX,
    description: 'prefix of every Redis key, to share one Redis between deployments (the same on every node)',
    env: 'IMGTOOL_REDIS_PREFIX',
  }),
  workers: setting(wholeNumber(0), {
    commands: SERVE,
    arg: '<n>',
    defaultText: '--concurrency',
    description: 'with --redis: pipelines this node runs for the cluster; 0 = API only, work goes to `imgtool worker`',
    env: 'IMGTOOL_WORKERS',
  }),
  nodeId: setting(text, {
    commands: SERVE,
    arg: '<name>',
    description: "with --redis: this API node's name in its log lines",
    env: 'IMGTOOL_NODE_ID',
  }),
  ops: setting(nameList, {
    commands: WORKER,
    arg: '<list>',
    defaultText: 'all',
    description: 'comma-separated operations this worker serves, e.g. remove-background,upscale',
    env: 'IMGTOOL_OPS',
  }),
  threads: setting(wholeNumber(1), {
    commands: WORKER,
    arg: '<n>',
    defaultText: 'cores / concurrency',
    description: 'onnxruntime threads per pipeline; with several workers on one machine give each its share of the cores',
    env: 'IMGTOOL_THREADS',
  }),
  stallTimeout: setting(seconds({ atLeast: 1 }, 3600), {
    commands: WORKER,
    arg: '<seconds>',
    default: 30,
    description: 'a job whose worker stops renewing its lock this long is given to another worker',
    env: 'IMGTOOL_STALL_TIMEOUT',
  }),
} as const;

export type SettingKey = keyof typeof SETTINGS;
type ValueOf<S> = S extends { type: SettingType<infer T> } ? T : never;
/** Resolved settings: a value for every setting with a default, possibly undefined for the others. */
export type Settings = { [K in SettingKey]: ValueOf<(typeof SETTINGS)[K]> | ((typeof SETTINGS)[K] extends { default: unknown } ? never : undefined) };

export const allSettings = () => Object.entries(SETTINGS) as [SettingKey, Setting<unknown>][];

export const flagName = (key: string) => `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
export const configKey = (key: SettingKey) => (SETTINGS[key] as Setting<unknown>).config ?? key;

export function settingsFor(command: SettingsCommand): [SettingKey, Setting<unknown>][] {
  return allSettings().filter(([, s]) => s.commands.includes(command));
}

/** A setting as `imgtool <command>` sees it (worker overrides applied). */
export function forCommand(s: Setting<unknown>, command: SettingsCommand): Setting<unknown> {
  return command === 'worker' && s.worker ? { ...s, default: s.worker.default, defaultText: undefined, description: s.worker.description } : s;
}

/** The default as help and docs show it. */
export function defaultText(s: Setting<unknown>, command: SettingsCommand = 'serve'): string | undefined {
  const c = forCommand(s, command);
  if (c.defaultText) return c.defaultText;
  if (c.default === undefined || typeof c.default === 'function') return undefined;
  if (c.default === false) return 'off';
  return String(c.default);
}

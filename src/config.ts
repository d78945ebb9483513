import { homedir } from 'node:os';
import { join } from 'node:path';
import Conf from 'conf';

/**
 * Where imgtool keeps its state. IMGTOOL_HOME moves everything (tests use it to isolate runs);
 * otherwise conf's platform default is used (~/.config/imgtool on Linux).
 */
export function imgtoolHome(env: NodeJS.ProcessEnv = process.env): string {
  if (env.IMGTOOL_HOME) return env.IMGTOOL_HOME;
  const xdg = env.XDG_CONFIG_HOME || join(homedir(), '.config');
  return join(xdg, 'imgtool');
}

/** The user config file: defaults that sit between the schemas' defaults and env/flags. */
export interface UserConfig {
  /** Remote server URL (like IMGTOOL_API_URL). */
  remote?: string;
  concurrency?: number;
  outDir?: string;
  nameTemplate?: string;
  /** Per-operation option defaults, keyed by operation name then API field name. */
  options?: Record<string, Record<string, unknown>>;
}

export function configStore(env: NodeJS.ProcessEnv = process.env): Conf<UserConfig> {
  return new Conf<UserConfig>({ projectName: 'imgtool', cwd: imgtoolHome(env), configName: 'config', projectSuffix: '' });
}

export function loadUserConfig(env: NodeJS.ProcessEnv = process.env): UserConfig {
  try {
    return configStore(env).store;
  } catch {
    return {};
  }
}

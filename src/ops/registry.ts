import type { OperationDefinition } from './define.js';
import { upscale } from './upscale/index.js';
import { outpaint } from './outpaint/index.js';
import { removeBackground } from './remove-background/index.js';
import { generateBackground } from './generate-background/index.js';
import { tryOn } from './try-on/index.js';
import { videoLoop } from './video-loop/index.js';
import { videoRemoveBackground } from './video-remove-background/index.js';

/** The built-in operations with their own option types, in the order the CLI and the docs list them. */
export const BUILT_IN_OPERATIONS = [
  upscale,
  outpaint,
  removeBackground,
  generateBackground,
  tryOn,
  videoLoop,
  videoRemoveBackground,
] as const satisfies readonly OperationDefinition[];

const operations: OperationDefinition[] = [...BUILT_IN_OPERATIONS];

/**
 * Every registered operation: the built-ins, then any added with `registerOperation`. The CLI,
 * the server routes, the OpenAPI document and the option reference all iterate this list.
 */
export const OPERATIONS: readonly OperationDefinition[] = operations;

/**
 * Adds an operation defined outside this file. Call it before building the CLI program or the
 * server. The server's worker threads load only the built-ins, so the server runs an operation
 * added here on its main thread.
 */
export function registerOperation(op: OperationDefinition): void {
  const clash = operations.find((o) => o.name === op.name || o.path === op.path || (op.jobPath !== undefined && o.jobPath === op.jobPath));
  if (clash) throw new Error(`operation ${op.name} (${op.path}) clashes with the registered ${clash.name} (${clash.path})`);
  operations.push(op);
}

export function getOperation(name: string): OperationDefinition | undefined {
  return OPERATIONS.find((op) => op.name === name);
}

import type { OperationDefinition } from './define.js';
import { upscale } from './upscale/index.js';
import { outpaint } from './outpaint/index.js';
import { removeBackground } from './remove-background/index.js';
import { generateBackground } from './generate-background/index.js';
import { tryOn } from './try-on/index.js';
import { videoLoop } from './video-loop/index.js';
import { videoRemoveBackground } from './video-remove-background/index.js';

/** Every operation, in the order the CLI and the docs list them. */
export const OPERATIONS: readonly OperationDefinition[] = [
  upscale,
  outpaint,
  removeBackground,
  generateBackground,
  tryOn,
  videoLoop,
  videoRemoveBackground,
] as unknown as readonly OperationDefinition[];

export function getOperation(name: string): OperationDefinition | undefined {
  return OPERATIONS.find((op) => op.name === name);
}

import { stat } from 'node:fs/promises';
import type { CostContext, LoadedInput, OperationDefinition } from '../ops/define.js';
import type { BatchTask } from './batch.js';

/**
 * Facts a cost estimate needs before running, from the operation's own `inspect` (video
 * background removal: the duration, 1 credit per started second). Only local files are
 * inspected; URLs and stdin are estimated at the minimum and charged exactly once known.
 */
export async function costContextFor(op: OperationDefinition, task: BatchTask): Promise<CostContext> {
  if (!op.inspect) return {};
  const inputs: Record<string, LoadedInput> = {};
  for (const spec of op.inputs) {
    const ref = task.refs[spec.key];
    if (!ref && spec.optional) continue;
    if (ref?.kind !== 'file') return {};
    inputs[spec.key] = { name: ref.display, path: ref.path, size: (await stat(ref.path)).size };
  }
  return op.inspect(inputs);
}

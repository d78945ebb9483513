import type { CostContext, OperationDefinition } from '../ops/define.js';
import type { BatchTask } from './batch.js';

/**
 * Facts a cost estimate needs before running. Only video background removal depends on the
 * input (1 credit per started second), so only video files are probed; URLs are estimated at
 * the minimum and charged exactly once known.
 */
export async function costContextFor(op: OperationDefinition, task: BatchTask): Promise<CostContext> {
  const video = op.inputs.find((s) => s.kind === 'video');
  if (!video) return {};
  const ref = task.refs[video.key];
  if (ref?.kind !== 'file') return {};
  const { probeVideo } = await import('../media/probe.js');
  const probe = await probeVideo(ref.path, { name: ref.path });
  return { durationSec: probe.duration };
}

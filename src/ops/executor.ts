import type { OperationDefinition, OpResult, RunContext } from './define.js';

/**
 * What the adapters share about running a job: where an input comes from before it is read,
 * and the executor interface the CLI's batch runner drives. They live here, below both the CLI
 * (local executor) and the client (remote executor), so neither imports the other.
 */

/**
 * Where one input comes from, before it is read. File refs carry an absolute path, the name as
 * the user wrote it (for messages and --json) and, for files found under a directory or a
 * recursive pattern, `rel`: their folder relative to that root, mirrored under --out-dir so
 * `2024/a.jpg` and `2025/a.jpg` do not collide.
 */
export type InputRef = { kind: 'file'; path: string; display: string; rel?: string } | { kind: 'url'; url: string } | { kind: 'stdin' };

/**
 * Where a job runs. The batch runner does not know whether pixels are computed here or on a
 * server: it hands the job to an executor and delivers what comes back.
 */
export interface Executor {
  readonly mode: 'local' | 'remote';
  /** Balance for the pre-batch check; undefined when unknown. */
  balance(): Promise<number | undefined>;
  run(op: OperationDefinition, refs: Record<string, InputRef>, options: Record<string, unknown>, ctx: RunContext): Promise<OpResult & { jobId?: string }>;
  /**
   * Accounts for a finished result and calls `commit` (which moves the output into place)
   * exactly once if the result is to be delivered. Returns the balance after, when known.
   */
  deliver(op: OperationDefinition, result: OpResult, meta: { input: string; output?: string }, commit: () => Promise<void>): Promise<number | undefined>;
}

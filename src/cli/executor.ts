import { ImgtoolError } from '../errors.js';
import type { OperationDefinition, OpResult, RunContext } from '../ops/define.js';
import { Ledger } from '../credits/ledger.js';
import { loadInput } from './load-input.js';
import type { InputRef } from './inputs.js';

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

export class LocalExecutor implements Executor {
  readonly mode = 'local' as const;
  constructor(
    readonly ledger: Ledger = new Ledger(),
    private readonly stdin: NodeJS.ReadableStream = process.stdin,
  ) {}

  async balance(): Promise<number> {
    return this.ledger.balance();
  }

  async run(op: OperationDefinition, refs: Record<string, InputRef>, options: Record<string, unknown>, ctx: RunContext): Promise<OpResult> {
    const cleanups: (() => Promise<void>)[] = [];
    try {
      const inputs: Record<string, import('../ops/define.js').LoadedInput> = {};
      for (const spec of op.inputs) {
        const ref = refs[spec.key];
        if (!ref) throw new ImgtoolError('invalid_parameter', `${op.name} needs --${spec.key}`);
        const { input, cleanup } = await loadInput(ref, spec, op.limits, op.name, { signal: ctx.signal, tempPath: ctx.tempPath, stdin: this.stdin });
        cleanups.push(cleanup);
        inputs[spec.key] = input;
      }
      const pipeline = await op.load();
      return await pipeline({ operation: op.name, inputs, options }, ctx);
    } finally {
      for (const c of cleanups) await c();
    }
  }

  async deliver(op: OperationDefinition, result: OpResult, meta: { input: string; output?: string }, commit: () => Promise<void>): Promise<number> {
    return this.ledger.charge(result.credits, { operation: op.name, ...meta }, commit);
  }
}

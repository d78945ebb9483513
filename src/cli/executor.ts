import { ImgtoolError } from '../errors.js';
import type { LoadedInput, OperationDefinition, OpResult, RunContext } from '../ops/define.js';
import type { Executor, InputRef } from '../ops/executor.js';
import { Ledger } from '../credits/ledger.js';
import { loadInput } from './load-input.js';

export type { Executor };

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
      const inputs: Record<string, LoadedInput> = {};
      for (const spec of op.inputs) {
        const ref = refs[spec.key];
        if (!ref && spec.optional) continue;
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

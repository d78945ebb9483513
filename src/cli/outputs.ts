import { mkdir } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import type { BatchTask } from './batch.js';
import { refLine } from './inputs.js';
import type { BatchSummary, FileRecord } from './progress.js';
import { HtmlReport } from './report.js';

/**
 * What a run leaves besides its outputs: the --failures list (inputs that failed, in the
 * --from-file format) and the --report page. Fed one record at a time, so watch mode can
 * refresh the report as it goes.
 */
export class BatchOutputs {
  /** Lines of the inputs that failed; in watch mode a later success removes its line. */
  private readonly failed = new Set<string>();
  readonly report?: HtmlReport;
  private writing: Promise<void> = Promise.resolve();
  private lastWrite = 0;

  constructor(
    operation: string,
    private readonly opts: { failures?: string; report?: string; cwd: string; warn: (message: string) => void; live?: boolean },
  ) {
    if (opts.report) this.report = new HtmlReport(opts.report, operation, opts.cwd);
  }

  record(record: FileRecord, task: BatchTask): void {
    const first = Object.values(task.refs)[0];
    if (first && record.status === 'failed') this.failed.add(refLine(first));
    else if (first && record.status === 'ok') this.failed.delete(refLine(first));
    this.report?.add(record, task);
    // Watch mode: the page follows the run, at most once a second.
    if (this.opts.live && this.report && Date.now() - this.lastWrite > 1000) {
      this.lastWrite = Date.now();
      this.writing = this.writing.then(() => this.report!.write(undefined, { live: true }).catch((e: Error) => this.opts.warn(`--report: ${e.message}`)));
    }
  }

  async finish(summary: BatchSummary): Promise<void> {
    await this.writing;
    if (this.opts.failures) {
      // Written even when empty, so a stale list from an earlier run never reruns fixed inputs.
      const text = this.failed.size ? `${[...this.failed].join('\n')}\n` : '';
      const path = resolve(this.opts.cwd, this.opts.failures);
      await mkdir(dirname(path), { recursive: true })
        .then(() => writeFileAtomic(path, text))
        .catch((e: Error) => this.opts.warn(`--failures ${this.opts.failures}: ${e.message}`));
    }
    if (this.report) await this.report.write(summary).catch((e: Error) => this.opts.warn(`--report ${this.opts.report}: ${e.message}`));
  }
}

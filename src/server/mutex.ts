/**
 * A FIFO async mutex. Every change to a credit balance goes through one of these so that two
 * concurrent requests in this process never read the same balance and both spend it.
 */
export class Mutex {
  private tail: Promise<void> = Promise.resolve();

  async run<T>(fn: () => Promise<T> | T): Promise<T> {
    const prev = this.tail;
    let release!: () => void;
    this.tail = new Promise<void>((r) => (release = r));
    try {
      await prev;
      return await fn();
    } finally {
      release();
    }
  }
}

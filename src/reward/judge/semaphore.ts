/**
 * A counting semaphore: at most `max` tasks run at once; the rest wait in FIFO order. The judge uses
 * one per judge instance, so every `judge()` call in a process shares the bound.
 */
export class Semaphore {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly max: number) {
    if (!Number.isInteger(max) || max < 1) throw new RangeError(`Semaphore: max must be a positive integer, got ${max}`);
  }

  /** Tasks running now. */
  get active(): number {
    return this.running;
  }

  /** Runs `task` once a slot is free and releases the slot when it settles. */
  async use<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.max) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.running++;
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      // Hand the slot straight to the next waiter, so `running` never dips and lets a newcomer jump the queue.
      if (next) next();
      else this.running--;
    }
  }
}

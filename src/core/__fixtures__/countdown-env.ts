import { BaseEnv } from '../base-env.js';
import { TaskError } from '../errors.js';
import type { Action, Split, TaskInfo, TimeStep, ToolSpec } from '../types.js';

/**
 * A tiny deterministic environment for the core's tests: bring a counter to zero, then submit.
 * Each observation carries a seeded "weather" word so determinism checks have something to catch.
 */
export class CountdownEnv extends BaseEnv {
  readonly domain = 'generic';
  readonly tools: readonly ToolSpec[] = [
    {
      name: 'decrement',
      description: 'Subtract 1 to 3 from the counter.',
      parameters: { type: 'object', properties: { by: { type: 'integer', minimum: 1, maximum: 3 } }, required: ['by'], additionalProperties: false },
      category: 'execute',
    },
    { name: 'peek', description: 'Read the counter.', parameters: { type: 'object', properties: {}, additionalProperties: false }, category: 'read' },
    { name: 'submit', description: 'Finish.', parameters: { type: 'object', properties: {}, additionalProperties: false }, category: 'submit' },
  ];
  private counter = 0;
  closed = 0;

  override listTasks(split: Split = 'train'): TaskInfo[] {
    const starts = split === 'train' ? [3, 4, 5, 6] : [7, 8];
    return starts.map((n) => this.info(n, split));
  }

  private info(n: number, split: Split): TaskInfo {
    return { id: `countdown-${n}`, domain: 'generic', instruction: `Bring the counter from ${n} to 0, then submit.`, split };
  }

  protected async onReset({ task }: { task?: string }): Promise<TimeStep> {
    let n: number;
    if (task === undefined) n = this.rng.int(3, 6);
    else {
      const m = /^countdown-(\d+)$/.exec(task);
      if (!m) throw new TaskError(`unknown task '${task}'`);
      n = Number(m[1]);
    }
    this.counter = n;
    return this.first(`counter=${n} weather=${this.weather()}`, this.info(n, n >= 7 ? 'heldout' : 'train'));
  }

  protected async onStep(action: Action): Promise<TimeStep> {
    if (action.tool === 'decrement') {
      this.counter -= action.params.by as number;
      return this.observe(`counter=${this.counter} weather=${this.weather()}`);
    }
    if (action.tool === 'peek') return this.observe(`counter=${this.counter}`);
    const success = this.counter === 0;
    return this.end(success ? 'done' : `counter is ${this.counter}, not 0`, success ? 1 : 0, { success, score: success ? 1 : 0 });
  }

  protected override async onClose(): Promise<void> {
    this.closed += 1;
  }

  private weather(): string {
    return this.rng.pick(['sun', 'rain', 'fog', 'wind', 'snow']);
  }
}

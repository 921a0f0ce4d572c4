/**
 * The soak's `pipeline_status` prober: one query a second, the way `gymflow pipeline status` and the MCP
 * server's `pipeline_status` tool ask (`askStatus`: a deadline, a clear problem when no worker answers), over one
 * long-lived connection. Every sample records what was up when it was sent and when it came back.
 */
import { Client, Connection } from '@temporalio/client';
import { clientConnectionOptions } from '../../src/runtime/temporal-target.js';
import { askStatus } from '../../src/cli/commands/pipeline.js';
import { fullMessage } from '../../src/cli/errors.js';
import type { StackState } from './stack.js';
import { defined } from '../../src/core/defined.js';

/** One query. */
export interface ProbeSample {
  /** Seconds since the run started. */
  at: number;
  ms: number;
  ok: boolean;
  /** The problem or error, when not ok. */
  error?: string;
  /** What was up when the query was sent and when it returned (the same for a clean sample). */
  before: StackState;
  after: StackState;
}

/** Asks `workflowId` for its status every `everyMs`, until stopped. */
export class StatusProber {
  readonly samples: ProbeSample[] = [];
  /** Training iterations the loop had finished at the last answer (0 before any). */
  iterationsDone = 0;
  private connection: Connection | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private inFlight: Promise<void> | undefined;

  constructor(
    private readonly address: () => string,
    private readonly workflowId: string,
    private readonly state: () => StackState,
    private readonly options: { everyMs: number; timeoutMs: number; t0: number },
  ) {}

  start(): void {
    const tick = (): void => {
      if (this.stopped) return;
      // One query at a time: a slow one delays the next rather than piling up.
      if (this.inFlight === undefined) this.inFlight = this.probe().finally(() => (this.inFlight = undefined));
      this.timer = setTimeout(tick, this.options.everyMs);
    };
    tick();
  }

  private async probe(): Promise<void> {
    const before = this.state();
    const started = performance.now();
    let ok = false;
    let error: string | undefined;
    try {
      this.connection ??= await Connection.connect(clientConnectionOptions({ address: this.address(), namespace: 'default' }));
      const answer = await askStatus(new Client({ connection: this.connection }), this.workflowId, this.options.timeoutMs);
      ok = answer.status !== undefined;
      error = answer.problem;
      // The iteration running, or at the end the last one; 0 is the baseline evaluation.
      if (answer.status !== undefined) this.iterationsDone = answer.status.stage === 'done' ? answer.status.iteration : Math.max(0, answer.status.iteration - 1);
    } catch (err) {
      error = fullMessage(err);
    }
    this.samples.push({ at: (Date.now() - this.options.t0) / 1000, ms: performance.now() - started, ok, before, after: this.state(), ...defined({ error }) });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.inFlight;
    await this.connection?.close();
  }
}

/** The p-th percentile (nearest rank) of `values`; NaN when empty. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] as number;
}

/**
 * The soak's chaos driver: seeded, every `interval` (uniform between its bounds) it does one thing to the running
 * loop — kill a worker (the workflows', the CPU activities', the GPU's) or the trainer, restart the Temporal server, kill a sandbox container, pause and resume,
 * cancel and continue. An event whose target is absent at that moment (no trainer running, no container) is
 * recorded as skipped and another kind is drawn, so the count of events that happened is what the report shows.
 *
 * Paced (`pace`), it also keeps up with the loop: once `iterationsDone()` of the run's iterations are done, at least
 * `minEvents × done / (iterations − 1)` events have happened (all of them by the start of the last iteration), firing
 * early — a quarter of the shortest interval after the last event — when the loop runs ahead of the draws. The count
 * of events then depends on the loop's progress, not on how fast the machine runs it.
 */
import { Rng } from '../../src/core/rng.js';

/** What the driver can do. */
export const CHAOS_KINDS = ['kill-workflow-worker', 'kill-cpu-worker', 'kill-gpu-worker', 'kill-trainer', 'restart-server', 'kill-container', 'pause-resume', 'cancel-continue'] as const;
/** One of {@link CHAOS_KINDS}. */
export type ChaosKind = (typeof CHAOS_KINDS)[number];

/** One thing the driver did (or tried). */
export interface ChaosEvent {
  kind: ChaosKind;
  /** Seconds since the run started. */
  at: number;
  /** How long the action took (a restart: until the new process was ready). */
  ms: number;
  /** What happened, or why nothing did. */
  detail: string;
  /** Set when the target was absent: nothing was done. */
  skipped?: boolean;
  /** Set when the action itself threw. */
  error?: string;
}

/** An action: resolves with what it did, or `undefined` when its target is absent. */
export type ChaosAction = () => Promise<string | undefined>;

/** Whether an event took place: not skipped for want of a target, and its action did not fail. */
export function tookPlace(e: ChaosEvent): boolean {
  return e.skipped !== true && e.error === undefined;
}

/** The events that took place, by kind (what the soak's report counts). */
export function eventCounts(events: readonly ChaosEvent[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const e of events) if (tookPlace(e)) out[e.kind] = (out[e.kind] ?? 0) + 1;
  return out;
}

/** How the driver keeps up with the loop (see the module's comment). */
export interface ChaosPace {
  minEvents: number;
  iterations: number;
  /** Iterations the loop has finished so far. */
  iterationsDone: () => number;
}

/** Events due once `done` of `iterations` are finished: `minEvents` spread evenly, all due before the last one. */
export function eventsDue(pace: Pick<ChaosPace, 'minEvents' | 'iterations'>, done: number): number {
  if (pace.iterations <= 1) return 0;
  return Math.min(pace.minEvents, Math.ceil((pace.minEvents * done) / (pace.iterations - 1)));
}

/** Runs chaos until `done()` says the loop has ended. */
export class ChaosDriver {
  readonly events: ChaosEvent[] = [];
  private readonly rng: Rng;

  constructor(
    seed: number,
    private readonly actions: Partial<Record<ChaosKind, ChaosAction>>,
    private readonly intervalMs: readonly [number, number],
    private readonly t0: number,
    private readonly log: (line: string) => void = () => undefined,
    private readonly pace?: ChaosPace,
  ) {
    this.rng = new Rng(seed);
    if (Object.keys(actions).length === 0) throw new Error('chaos: no event kinds to draw from');
  }

  /** The kinds it draws from. */
  get kinds(): ChaosKind[] {
    return CHAOS_KINDS.filter((k) => this.actions[k] !== undefined);
  }

  private async sleep(ms: number, wake: () => boolean): Promise<void> {
    const until = Date.now() + ms;
    while (!wake() && Date.now() < until) await new Promise((r) => setTimeout(r, Math.min(500, until - Date.now())));
  }

  /** Events that took place. */
  get happened(): number {
    return this.events.filter(tookPlace).length;
  }

  /** True when the loop has run ahead of the events: fewer have happened than its progress makes due. */
  private behind(): boolean {
    return this.pace !== undefined && this.happened < eventsDue(this.pace, this.pace.iterationsDone());
  }

  async run(done: () => boolean): Promise<void> {
    const kinds = this.kinds;
    let lastEvent = Date.now();
    const catchUpGapMs = this.intervalMs[0] / 4;
    while (!done()) {
      await this.sleep(this.rng.int(this.intervalMs[0], this.intervalMs[1]), () => done() || (Date.now() - lastEvent >= catchUpGapMs && this.behind()));
      // Up to three draws: an absent target (no trainer running now) gives another kind its turn.
      for (let attempt = 0; attempt < 3 && !done(); attempt++) {
        const kind = kinds[this.rng.int(0, kinds.length - 1)] as ChaosKind;
        const started = Date.now();
        const at = (started - this.t0) / 1000;
        try {
          const detail = await (this.actions[kind] as ChaosAction)();
          this.events.push({ kind, at, ms: Date.now() - started, detail: detail ?? 'no target at this moment', ...(detail === undefined ? { skipped: true } : {}) });
          this.log(`chaos ${kind} at ${at.toFixed(0)} s: ${detail ?? 'skipped, no target at this moment'}`);
          if (detail !== undefined) break;
        } catch (err) {
          this.events.push({ kind, at, ms: Date.now() - started, detail: 'the action failed', error: err instanceof Error ? err.message : String(err) });
          this.log(`chaos ${kind} at ${at.toFixed(0)} s FAILED: ${err instanceof Error ? err.message : String(err)}`);
          break;
        }
      }
      lastEvent = Date.now();
    }
  }
}

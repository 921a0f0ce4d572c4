/**
 * The workflow of `tests/progress-reporter.test.ts`: runs the `reportProgress` activity as an activity or as
 * a local activity and returns the `stage_progress` signals it received meanwhile.
 */
import { condition, proxyActivities, proxyLocalActivities, setHandler } from '@temporalio/workflow';
import { stageProgressSignal, type StageProgress } from '../../workflows/messages.js';

/** The activity the test worker registers: reports `units` units of progress `gapMs` apart, then returns `units`. */
export interface ProgressActivities {
  reportProgress(units: number, gapMs: number): Promise<number>;
}

const remote = proxyActivities<ProgressActivities>({ startToCloseTimeout: '1 minute' });
const local = proxyLocalActivities<ProgressActivities>({ startToCloseTimeout: '1 minute' });

/** Runs the activity (`execution`), then waits briefly for signals still in flight; returns what arrived. */
export async function progressWorkflow(execution: 'activity' | 'local', units: number, gapMs = 20): Promise<{ done: number; signals: number[] }> {
  const signals: number[] = [];
  setHandler(stageProgressSignal, (p: StageProgress) => {
    signals.push(p.done);
  });
  const done = await (execution === 'local' ? local : remote).reportProgress(units, gapMs);
  // The last unit's signal may arrive after the activity's completion: wait for it (an activity's only). The wait
  // ends when it arrives; the limit is for one that never does, generous for a busy machine.
  if (execution === 'activity') await condition(() => signals.at(-1) === units, '60 seconds');
  return { done, signals };
}

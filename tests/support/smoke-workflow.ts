/**
 * The workflow of `tests/temporal-smoke.test.ts`: a tiny workflow that exercises what the pipeline relies on
 * — a `pipeline_status` query, a signal, an update and an activity — so the test can check the real stack end
 * to end. It is test support, not part of the pipeline: no worker of gymflow's registers it (the test's own
 * worker bundles this file).
 *
 * It waits for the `finish` signal, then runs one activity and returns its result.
 */
import {
  allHandlersFinished,
  ApplicationFailure,
  condition,
  defineQuery,
  defineSignal,
  defineUpdate,
  proxyActivities,
  setHandler,
} from '@temporalio/workflow';
import type * as activities from './smoke-activities.js';

/** What `pipeline_status` answers for the smoke workflow. */
export interface SmokeStatus {
  stage: 'waiting' | 'running' | 'done';
  progress: number;
  note: string | undefined;
}

/**
 * The smoke workflow's own `pipeline_status` query: the same name as the pipeline's (`workflows/messages.ts`), so
 * clients and the Web UI treat both alike, with the smoke workflow's smaller status.
 */
export const smokeStatusQuery = defineQuery<SmokeStatus>('pipeline_status');
/** Lets the workflow go on to its activity. */
export const finishSignal = defineSignal<[]>('finish');
/** Sets the note shown in the status; rejects an empty note in its validator. Returns the previous note. */
export const setNoteUpdate = defineUpdate<string | undefined, [string]>('set_note');

// The smoke activity is idempotent and fast: a short timeout, a few retries.
const { smokeGreet } = proxyActivities<typeof activities>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 3 },
});

/** Waits for `finish`, greets `name` through an activity and returns the greeting. */
export async function smokeWorkflow(name: string): Promise<string> {
  const status: SmokeStatus = { stage: 'waiting', progress: 0, note: undefined };
  let finished = false;

  setHandler(smokeStatusQuery, () => ({ ...status }));
  setHandler(finishSignal, () => {
    finished = true;
  });
  setHandler(
    setNoteUpdate,
    (note) => {
      const previous = status.note;
      status.note = note;
      return previous;
    },
    {
      validator: (note) => {
        if (note.trim() === '') throw ApplicationFailure.nonRetryable('note must not be empty', 'InvalidNote');
      },
    },
  );

  await condition(() => finished);
  status.stage = 'running';
  status.progress = 0.5;
  const greeting = await smokeGreet(name);
  status.stage = 'done';
  status.progress = 1;
  await condition(allHandlersFinished);
  return greeting;
}

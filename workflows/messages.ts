/**
 * The messages of gymflow's pipeline workflows (`pipeline`, `trainingLoop`): the `pipeline_status` query and
 * the `pause`, `resume`, `cancel` signals, plus the `stage_progress` signal activities send so the status
 * can show a running stage's progress. Clients (the CLI, tests) import these definitions too.
 */
import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { IngestStatus } from '../src/loop/ingest.js';
import type { PipelineStatus, StageName } from '../src/loop/status.js';

/** The full status of the pipeline (see `PipelineStatus`). */
export const pipelineStatusQuery = defineQuery<PipelineStatus>('pipeline_status');

/** Stop before the next activity starts (the running one finishes); the status shows `paused`. */
export const pauseSignal = defineSignal<[]>('pause');

/** Go on after `pause`. */
export const resumeSignal = defineSignal<[]>('resume');

/** What `cancel` asks for. */
export interface CancelRequest {
  /**
   * `finish` (default): let the running activity finish, then stop; `abort`: cancel it now (the trainer's
   * process group is killed, collection stops starting episodes). Either way the workflow completes with
   * `stopReason: 'cancelled'` and the status says what happened to the running activity.
   */
  mode?: 'finish' | 'abort';
  reason?: string;
}

/** Stop the pipeline gracefully (see {@link CancelRequest}). */
export const cancelSignal = defineSignal<[CancelRequest?]>('cancel');

/** Progress of a running stage, sent by its activity (throttled). */
export interface StageProgress {
  stage: StageName;
  done: number;
  total: number;
  unit: string;
  note?: string;
  /** Which activity reports (its activity id): shards of one stage report separately. */
  key?: string;
}

/** Sent by activities while they run; the workflow copies it into the status. */
export const stageProgressSignal = defineSignal<[StageProgress]>('stage_progress');

/** The status of an `ingest` run (agent logs → trajectories → scored → dataset): counts and refs. */
export const ingestStatusQuery = defineQuery<IngestStatus>('ingest_status');

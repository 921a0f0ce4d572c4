/**
 * The body of a scoring thread of `ScorePool` (score-pool.ts), started as it is when built, through `bin/tsx-worker.js` from the sources: it
 * decodes, splits, parses, checks and scores every batch of lines it is sent, exactly as `scoreFile` reads and
 * scores them in one thread, and sends back the scored lines and the problems of the lines it skipped.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { GymflowError } from '../core/errors.js';
import { splitLines } from '../core/jsonl-file.js';
import { checkTrajectoryJson, parseJsonlLines } from '../core/trajectory.js';
import { IsotonicCalibration } from './calibration/isotonic.js';
import type { FailedBatch, ScoreBatch, ScoredBatch, ScoreWorkerData } from './score-pool.js';
import { scoreTrajectory } from './score.js';
import type { ScoreOptions } from './types.js';

const data = workerData as ScoreWorkerData;
const options: ScoreOptions = { profile: data.profile };
if (data.calibration !== undefined) options.calibration = IsotonicCalibration.fromJSON(data.calibration, `${data.label} (calibration)`);
if (data.referenceSteps !== undefined) options.referenceSteps = data.referenceSteps;

async function score(batch: ScoreBatch): Promise<ScoredBatch> {
  let text = '';
  let scored = 0;
  let skipped = 0;
  const errors: string[] = [];
  const lines = splitLines(batch.bytes, batch.firstLine === 1);
  for (const record of parseJsonlLines(lines, data.label, checkTrajectoryJson, batch.firstLine)) {
    if (!record.ok) {
      skipped++;
      errors.push(...record.errors);
      continue;
    }
    text += `${JSON.stringify(await scoreTrajectory(record.value, options))}\n`;
    scored++;
  }
  return { seq: batch.seq, text, scored, skipped, errors };
}

function failed(seq: number, err: unknown): FailedBatch {
  const e = err instanceof Error ? err : new Error(String(err));
  return { seq, error: { name: e.name, message: e.message, ...(e instanceof GymflowError ? { code: e.code } : {}) } };
}

const port = parentPort;
if (port === null) throw new Error('score-worker.ts runs as a worker thread of ScorePool (score-pool.ts)');
port.on('message', (batch: ScoreBatch) => {
  score(batch).then(
    (result) => port.postMessage(result),
    (err: unknown) => port.postMessage(failed(batch.seq, err)),
  );
});

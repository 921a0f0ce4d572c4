import { checkTrajectory } from '../../core/trajectory.js';
import type { ConversionItem, ConvertContext, LogAdapter, LogSample } from '../adapter.js';
import { streamJsonl } from '../../core/jsonl-file.js';
import { jsonlProblem } from '../jsonl.js';
import { isRecord } from '../values.js';

/**
 * gymflow's own trajectory JSONL: already standard. Streamed line by line; each line is validated
 * ({@link checkTrajectory}: the schema, and that `id` is the content id of the record) and passed
 * through unchanged. A bad line is reported with its number and JSON path and skipped.
 */
export const gymflowAdapter: LogAdapter = {
  name: 'gymflow',
  description: 'gymflow trajectory JSONL (validated and passed through)',
  detect: detectGymflow,
  convert: convertGymflow,
};

function detectGymflow(sample: LogSample): number {
  const first = sample.firstRecord;
  if (isRecord(first)) {
    return 'schemaVersion' in first && 'steps' in first && 'outcome' in first ? 0.99 : 0;
  }
  if (first !== undefined) return 0;
  return /^\s*\{"schemaVersion"\s*:/.test(sample.head) ? 0.8 : 0;
}

async function* convertGymflow(path: string, ctx: ConvertContext): AsyncGenerator<ConversionItem> {
  for await (const record of streamJsonl(path, ctx.file, checkTrajectory)) {
    if (record.ok) yield record.value;
    else for (const message of record.errors) yield jsonlProblem(ctx.file, record.line, message);
  }
}

/**
 * `ingest(input)`: agent logs as a pipeline (docs/pipeline.md, "Agent logs as a pipeline") — the files of a directory
 * the ingest has not taken in yet → convert and validate → score → export, each an activity on the CPU queue, then
 * the files recorded in the ingest's state. A second run over the same directory finds nothing new and says so; on a
 * Temporal Schedule (`gymflow pipeline ingest DIR --every 10m`) each run takes the files added since. `ingest_status`
 * answers the counts (files found, new, converted, rejected; trajectories scored; records exported) at any time.
 */
import { ApplicationFailure, proxyActivities, setHandler } from '@temporalio/workflow';
import type { PipelineActivities } from '../activities/index.js';
import { IngestInputSchema, ingestRefName, initialIngestStatus, type IngestInput } from '../src/loop/ingest.js';
import type { IngestStatus } from '../src/loop/ingest.js';
import { STORE_OPTIONS } from './activity-options.js';
import { ingestStatusQuery } from './messages.js';
import { summarised } from './summarised.js';
import { defined } from '../src/core/defined.js';

/** One ingest run (see the module comment); returns its final status. */
export async function ingest(given: IngestInput): Promise<IngestStatus> {
  const parsed = IngestInputSchema.safeParse(given);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw ApplicationFailure.nonRetryable(`ingest input $.${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}`, 'CONFIG_ERROR');
  }
  const input = parsed.data;
  const status = initialIngestStatus(input);
  setHandler(ingestStatusQuery, () => status);
  const a = proxyActivities<PipelineActivities>({ ...STORE_OPTIONS, taskQueue: input.task_queue });
  const where = defined({ store: input.store });
  /** An activity's one-line summary for the Web UI. */
  const about = (what: string): string => `ingest ${input.name} · ${what}`;
  try {
    const scan = await summarised(a.scanLogs, about(`scan ${input.dir}`))({ name: input.name, dir: input.dir, ...where });
    status.files = { found: scan.found, known: scan.known, new: scan.new };
    if (scan.ref === undefined) {
      status.note = `nothing new: ${scan.found} file${scan.found === 1 ? '' : 's'} in ${input.dir}, all ingested before`;
      return finish(status);
    }
    status.refs.files = scan.ref;

    status.stage = 'convert';
    const converted = await summarised(a.convertLogs, about(`convert ${scan.new} new file${scan.new === 1 ? '' : 's'}`))({ name: input.name, files: scan.ref, ...defined({ format: input.format }), ...where });
    status.converted = { files: converted.files, trajectories: converted.trajectories };
    status.rejected = { files: converted.rejected.length, problems: converted.problems, first: converted.first };
    if (converted.problemsRef !== undefined) status.refs.rejected = converted.problemsRef;
    const outputs: string[] = converted.problemsRef === undefined ? [] : [converted.problemsRef];

    if (converted.ref !== undefined) {
      status.refs.trajectories = converted.ref;
      status.stage = 'score';
      const scored = await summarised(a.scoreLogs, about(`score (${input.domain})`))({ name: input.name, setRef: converted.ref, domain: input.domain, ...where });
      status.scored = scored.scored;
      status.refs.scored = scored.ref;

      status.stage = 'export';
      try {
        const dataset = await summarised(a.exportTrainingData, about(`export ${input.export}`))({ setRef: scored.ref, export: { format: input.export }, field: '$.export', name: ingestRefName(input.name, 'dataset'), seed: 0, ...where });
        status.exported = dataset.records;
        status.refs.dataset = dataset.ref;
        outputs.push(dataset.ref);
      } catch (err) {
        // No records (a DPO export of logs with one trajectory per task): the scored set stands.
        status.note = `no ${input.export} dataset: ${(err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : (err as Error).message}`;
      }
      outputs.push(scored.ref);
    }

    status.stage = 'record';
    const recorded = await summarised(a.recordIngested, about('record the ingested files'))({ name: input.name, files: scan.ref, rejected: converted.rejected, outputs, ...where });
    status.refs.state = recorded.ref;
    status.note ??= `${converted.files} of ${scan.new} new file${scan.new === 1 ? '' : 's'} converted (${converted.trajectories} trajectories), ${converted.rejected.length} rejected; ${recorded.files} ingested in all`;
    return finish(status);
  } catch (err) {
    status.state = 'failed';
    throw err;
  }
}

function finish(status: IngestStatus): IngestStatus {
  status.stage = 'done';
  status.state = 'completed';
  return status;
}

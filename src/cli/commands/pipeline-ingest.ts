import path from 'node:path';
import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { ConfigError } from '../../core/errors.js';
import { DURATION_PATTERN, durationMs } from '../../core/duration.js';
import { resolveStoreRoot, shortRef } from '../../hub/store/layout.js';
import { IngestInputSchema, type IngestInput, type IngestStatus } from '../../loop/ingest.js';
import { ingestSummary } from '../../loop/summaries.js';
import { ingestStatusQuery } from '../../../workflows/messages.js';
import { printJson } from '../options.js';
import { withClient, withConnect, type ConnectOptions } from './pipeline.js';
import { defined } from '../../core/defined.js';

interface IngestOptions extends ConnectOptions {
  name: string;
  domain: string;
  format?: string;
  export: 'sft' | 'dpo' | 'rl';
  store?: string;
  taskQueue: string;
  every?: string;
  wait?: boolean;
  json?: boolean;
}

function parseEvery(value: string): string {
  if (!DURATION_PATTERN.test(value) || durationMs(value) < 10_000) throw new InvalidArgumentError(`expected a duration of at least 10s such as 10m or 1h, got '${value}'`);
  return value;
}

/** The workflow input of an ingest, checked here so that a mistake is named before anything starts. */
export function ingestInput(dir: string, opts: IngestOptions): IngestInput {
  const parsed = IngestInputSchema.safeParse({
    name: opts.name,
    dir: path.resolve(dir),
    domain: opts.domain,
    export: opts.export,
    task_queue: opts.taskQueue,
    ...defined({ format: opts.format, store: opts.store === undefined ? undefined : resolveStoreRoot(opts.store) }),
  });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const option = { name: '--name', dir: 'DIR', domain: '--domain', export: '--export', format: '--format', task_queue: '--task-queue', store: '--store' }[String(issue?.path[0])] ?? String(issue?.path[0]);
    throw new ConfigError(`pipeline ingest ${option}: ${issue?.message ?? 'invalid'}`);
  }
  return parsed.data;
}

/** One line per status: what the run found, converted, rejected, scored and exported. */
export function formatIngestStatus(s: IngestStatus): string {
  const lines = [
    `ingest ${s.name} (${s.dir}): ${s.state}${s.state === 'running' ? ` (${s.stage})` : ''}`,
    `  files: ${s.files.found} found, ${s.files.known} ingested before, ${s.files.new} new`,
    `  converted: ${s.converted.files} file(s), ${s.converted.trajectories} trajectories; rejected: ${s.rejected.files} file(s), ${s.rejected.problems} problem(s)`,
    `  scored: ${s.scored}; exported: ${s.exported} record(s)`,
  ];
  for (const p of s.rejected.first) lines.push(`  problem: ${p.file}${p.line === undefined ? '' : `:${p.line}`} ${p.path}: ${p.message}`);
  const refs = Object.entries(s.refs).map(([k, v]) => `${k} ${shortRef(v)}`);
  if (refs.length > 0) lines.push(`  refs: ${refs.join(', ')}`);
  if (s.note !== undefined) lines.push(`  ${s.note}`);
  return lines.join('\n');
}

async function startIngest(client: Client, input: IngestInput, opts: IngestOptions): Promise<void> {
  const workflowId = `ingest-${input.name}-${new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '')}`;
  const handle = await client.workflow.start('ingest', { taskQueue: input.task_queue, workflowId, args: [input], staticSummary: ingestSummary(input) });
  if (!opts.wait) {
    if (opts.json) return printJson({ workflowId, runId: handle.firstExecutionRunId });
    console.log(`started ingest ${workflowId}; its status: temporal workflow query --workflow-id ${workflowId} --type ingest_status`);
    return;
  }
  const status = (await handle.result()) as IngestStatus;
  if (opts.json) return printJson({ workflowId, status });
  console.log(formatIngestStatus(status));
}

async function scheduleIngest(client: Client, input: IngestInput, opts: IngestOptions & { every: string }): Promise<void> {
  const scheduleId = `ingest-${input.name}`;
  try {
    await client.schedule.create({
      scheduleId,
      spec: { intervals: [{ every: opts.every }] },
      // A run still going when the next is due: the next is skipped (the files wait for the one after).
      policies: { overlap: ScheduleOverlapPolicy.SKIP },
      action: { type: 'startWorkflow', workflowType: 'ingest', taskQueue: input.task_queue, args: [input], workflowId: scheduleId, staticSummary: ingestSummary(input) },
    });
  } catch (err) {
    if (err instanceof ScheduleAlreadyRunning) throw new ConfigError(`a schedule '${scheduleId}' already exists: delete it first (temporal schedule delete --schedule-id ${scheduleId})`);
    throw err;
  }
  if (opts.json) return printJson({ scheduleId, every: opts.every });
  console.log(`scheduled ingest ${scheduleId} every ${opts.every}; stop it with: temporal schedule delete --schedule-id ${scheduleId}`);
}

/** `gymflow pipeline ingest DIR`: agent logs → trajectories → scored → dataset, on Temporal, once or on a schedule. */
export function ingestCommand(pipeline: Command): void {
  withConnect(pipeline.command('ingest'))
    .description('ingest a directory of agent logs on Temporal: convert, validate, score and export the files not ingested before (once, or --every)')
    .argument('<dir>', 'directory of agent logs (readable by the CPU workers)')
    .requiredOption('--name <name>', "the ingest's name: its state and outputs are named ingest/<name>/… in the store")
    .requiredOption('--domain <name>', 'domain profile whose rules score the trajectories (gymflow profiles)')
    .option('--format <name>', 'recorder format of every file (default: detected per file)')
    .option('--export <format>', 'dataset format: sft, dpo or rl', 'sft')
    .option('--store <dir>', "the store (default: the workers')")
    .option('--task-queue <queue>', 'CPU task queue', 'gymflow')
    .option('--every <duration>', 'run on a Temporal Schedule this often (e.g. 10m), each run taking the files added since', parseEvery)
    .option('--wait', 'wait for the run and print its counts')
    .option('--json', 'print JSON')
    .action(async (dir: string, opts: IngestOptions) => {
      const input = ingestInput(dir, opts);
      await withClient(opts, async (client) => {
        if (opts.every !== undefined) await scheduleIngest(client, input, { ...opts, every: opts.every });
        else await startIngest(client, input, opts);
      });
    });

  withConnect(pipeline.command('ingest-status'))
    .description("print an ingest run's counts (its ingest_status query)")
    .argument('<workflow-id>', 'workflow id of the run (a scheduled run: ingest-<name>-<time>)')
    .option('--json', 'print JSON')
    .action(async (id: string, opts: ConnectOptions & { json?: boolean }) => {
      await withClient(opts, async (client) => {
        const status = await client.workflow.getHandle(id).query(ingestStatusQuery);
        if (opts.json) return printJson(status);
        console.log(formatIngestStatus(status));
      });
    });
}

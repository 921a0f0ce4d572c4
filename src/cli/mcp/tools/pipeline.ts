/**
 * Pipeline tools: start a pipeline or training loop on Temporal, ask its `pipeline_status`, pause, resume, cancel,
 * list runs. Each is `gymflow pipeline …`'s function, on the same client code.
 */
import { z } from 'zod';
import { parsePipelineConfig, type PipelineConfig } from '../../../loop/config.js';
import type { PipelineStatus } from '../../../loop/status.js';
import { loadPipelineConfig } from '../../../runtime/config-file.js';
import { cancelPipeline, describeRun, listPipelines, listQuery, PIPELINE_WORKFLOWS, signalPipeline, startPipeline, withClient, type ConnectOptions } from '../../commands/pipeline.js';
import { defineTool, type ToolContext, type ToolDefinition } from '../context.js';
import { temporalFields } from './fields.js';
import { defined } from '../../../core/defined.js';

/** The Temporal target of a call: its own address / namespace, else the server's. */
function target(ctx: ToolContext, args: { address?: string | undefined; namespace?: string | undefined }): ConnectOptions {
  const address = args.address ?? ctx.temporal.address;
  const namespace = args.namespace ?? ctx.temporal.namespace;
  return defined({ address, namespace });
}

/** One line of a status: state, stage, iteration, progress. */
function statusLine(s: PipelineStatus): string {
  const progress = s.progress ? ` ${s.progress.done}/${s.progress.total} ${s.progress.unit}` : '';
  return `${s.state}${s.paused && s.state !== 'paused' ? ' (paused)' : ''}, stage ${s.stage}${progress}, iteration ${s.iteration}/${s.maxIterations}`;
}

const workflowId = z.string().trim().min(1).describe('the workflow id run_pipeline returned (or gymflow pipeline start printed)');

/** The pipeline tools. */
export function pipelineTools(): ToolDefinition[] {
  return [
    defineTool({
      name: 'run_pipeline',
      title: 'Start a pipeline on Temporal',
      description:
        'Validates a pipeline configuration (docs/pipeline.md: env, policy, collect, reward, export, train, eval, max_iterations, …) and starts a trainingLoop (iterations of the pass, continuing as new between them) or one pipeline pass on Temporal; returns the workflow id at once. ' +
        'Workers must poll the configuration\'s task queues (gymflow dev starts a dev server and both workers). Follow it with pipeline_status; steer it with pause_pipeline, resume_pipeline, cancel_pipeline.',
      input: z
        .object({
          config: z
            .union([z.string().min(1), z.record(z.string(), z.unknown())])
            .describe('a pipeline configuration file (YAML or JSON) under the root, or the configuration itself as an object'),
          workflow: z.enum(PIPELINE_WORKFLOWS).default('trainingLoop').describe('trainingLoop, or pipeline for one pass'),
          workflow_id: z.string().trim().min(1).optional().describe('the workflow id (default: <name>-<yyyymmdd-hhmmss>)'),
          ...temporalFields,
        })
        .strict(),
      annotations: { readOnlyHint: false, openWorldHint: true },
      async run(args, { ctx }) {
        const config: PipelineConfig = typeof args.config === 'string' ? await loadPipelineConfig(await ctx.root.input(args.config, 'config')) : parsePipelineConfig(args.config, 'config');
        return withClient(target(ctx, args), async (client, where) => {
          const started = await startPipeline(client, config, { workflow: args.workflow, ...defined({ workflowId: args.workflow_id }) });
          const data = { workflowId: started.workflowId, runId: started.runId, workflow: args.workflow, taskQueue: config.task_queues.cpu, experiment: config.name, env: config.env, address: where.address, namespace: where.namespace };
          return { summary: `started ${args.workflow} ${started.workflowId} (experiment ${config.name}, env ${config.env}) on task queue ${config.task_queues.cpu} at ${where.address}`, data };
        });
      },
    }),
    defineTool({
      name: 'pipeline_status',
      title: "A pipeline's status",
      description:
        "Asks a run its pipeline_status query: state, stage, iteration, per-stage state/progress/duration/artifact ref, the metrics history per iteration (held-out success with CI, reward, loss, …), the best iteration and the last error; plus the execution's Temporal status. A query needs a worker on the run's task queue: without one, problem says so.",
      input: z.object({ workflow_id: workflowId, ...temporalFields }).strict(),
      annotations: { readOnlyHint: true, openWorldHint: true },
      async run(args, { ctx }) {
        return withClient(target(ctx, args), async (client, where) => {
          const { described, status, problem } = await describeRun(client, args.workflow_id, where);
          const data = {
            workflowId: args.workflow_id,
            runId: described.runId,
            type: described.type,
            status: described.status.name,
            taskQueue: described.taskQueue,
            startTime: described.startTime.toISOString(),
            pipelineStatus: status ?? null,
            ...defined({ problem }),
          };
          const brief = { ...data, pipelineStatus: status === undefined ? null : { ...status, history: status.history.slice(-5) } };
          return { summary: `${args.workflow_id} (${described.type}, ${described.status.name}): ${status ? statusLine(status) : (problem ?? 'no status')}`, data, brief };
        });
      },
    }),
    ...(['pause', 'resume'] as const).map((name) =>
      defineTool({
        name: `${name}_pipeline`,
        title: `${name === 'pause' ? 'Pause' : 'Resume'} a pipeline`,
        description:
          name === 'pause'
            ? 'Pauses a run before its next stage (the running activity finishes first). changed says whether it was running unpaused.'
            : 'Resumes a paused run: it goes on with its next stage. changed says whether it was paused.',
        input: z.object({ workflow_id: workflowId, ...temporalFields }).strict(),
        annotations: { readOnlyHint: false, idempotentHint: true, openWorldHint: true },
        async run(args, { ctx }) {
          return withClient(target(ctx, args), async (client, where) => {
            const sent = await signalPipeline(client, args.workflow_id, where, name);
            const note = sent.changed === false ? `; it was ${name === 'pause' ? 'already paused' : 'not paused'}, so nothing changes` : '';
            return { summary: `sent ${name} to ${args.workflow_id}${note}`, data: { ...sent } };
          });
        },
      }),
    ),
    defineTool({
      name: 'cancel_pipeline',
      title: 'Cancel a pipeline',
      description:
        'Stops a run gracefully: mode finish (default) lets the running activity complete, abort cancels it (the trainer is killed; the last checkpoint stands). With wait, returns once the run has stopped, with its final status.',
      input: z
        .object({
          workflow_id: workflowId,
          mode: z.enum(['finish', 'abort']).default('finish').describe('finish the running activity first, or abort it'),
          reason: z.string().min(1).optional().describe('why (kept in the status)'),
          wait: z.boolean().default(false).describe('wait until the run has stopped'),
          ...temporalFields,
        })
        .strict(),
      annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: true },
      async run(args, { ctx }) {
        return withClient(target(ctx, args), async (client, where) => {
          const { note, ...sent } = await cancelPipeline(client, args.workflow_id, where, { mode: args.mode, ...defined({ reason: args.reason }) }, args.wait);
          return { summary: `sent cancel (${args.mode}) to ${args.workflow_id}${note === undefined ? '' : `; ${note}`}${sent.status === undefined ? '' : `; it is now ${sent.status}`}`, data: { ...sent, ...defined({ note }) } };
        });
      },
    }),
    defineTool({
      name: 'list_pipelines',
      title: 'List pipeline runs',
      description: 'Lists pipeline and trainingLoop runs, newest first, from the visibility API, filtered by experiment, environment or status: id, status, experiment, env, algorithm, iteration, best success, start and close times.',
      input: z
        .object({
          experiment: z.string().min(1).optional().describe('only this experiment (the configuration name)'),
          env: z.string().min(1).optional().describe('only this environment id'),
          status: z.enum(['Running', 'Completed', 'Failed', 'Canceled', 'Terminated', 'ContinuedAsNew', 'TimedOut']).optional().describe('only runs in this state'),
          limit: z.number().int().positive().max(1000).default(20).describe('at most this many runs'),
          ...temporalFields,
        })
        .strict(),
      annotations: { readOnlyHint: true, openWorldHint: true },
      async run(args, { ctx }) {
        return withClient(target(ctx, args), async (client) => {
          const rows = await listPipelines(
            client,
            listQuery(defined({ experiment: args.experiment, env: args.env, status: args.status })),
            args.limit,
          );
          return { summary: `${rows.length} run(s)`, data: { runs: rows } };
        });
      },
    }),
  ];
}

/**
 * Sandbox tools: Docker sandboxes that live in the server process, tool calls in them, reset, snapshot, and replay
 * of a recorded trajectory. Each is `gymflow sandbox …`'s function.
 */
import { z } from 'zod';
import { getProfile } from '../../../core/profiles/index.js';
import { builtinTasks } from '../../../envs/sandbox/tasks.js';
import { createSandbox, readTrajectoryFile, replayTrajectory, resetSandbox, runSandboxTool, sandboxToolNames, snapshotSandbox } from '../../commands/sandbox.js';
import { defineTool, resultFile, type ToolDefinition } from '../context.js';
import { relativePath } from './fields.js';
import { defined } from '../../../core/defined.js';

/** `name {param, param?}: description` for each tool a sandbox runs, for the model reading `execute_tool`'s description. */
function toolLines(): string {
  return getProfile('coding')
    .tools.map((t) => {
      const params = t.parameters as { properties?: Record<string, unknown>; required?: string[] };
      const names = Object.keys(params.properties ?? {}).map((p) => (params.required?.includes(p) ? p : `${p}?`));
      return `- ${t.name} {${names.join(', ')}}: ${t.description}`;
    })
    .join('\n');
}

const sandboxId = z.string().min(1).describe('a sandbox id returned by create_sandbox (sbx-…)');

/** The sandbox tools. */
export function sandboxTools(): ToolDefinition[] {
  const names = sandboxToolNames() as [string, ...string[]];
  return [
    defineTool({
      name: 'create_sandbox',
      title: 'Create a Docker sandbox',
      description:
        'Creates a hardened Docker sandbox (no network, all capabilities dropped) that lives as long as this server, and returns its id for execute_tool, reset_sandbox, sandbox_snapshot and destroy_sandbox. ' +
        `With a task, /work holds the task's repository (a git repo with a failing test; submit runs its tests). Built-in tasks: ${builtinTasks()
          .map((t) => t.id)
          .join(', ')}. Without a task, /work is empty.`,
      input: z
        .object({
          task: z.string().min(1).optional().describe('a task id (built-in, or from tasks_file)'),
          tasks_file: relativePath.optional().describe('a tasks JSONL file under the workspace root (SWE-bench-style instances, docs/sandbox.md); default: the built-in tasks'),
          image: z.string().min(1).optional().describe('the Docker image (default gymflow/sandbox:latest)'),
        })
        .strict(),
      annotations: { destructiveHint: false, openWorldHint: false },
      async run(args, { ctx }) {
        const tasksFile = args.tasks_file === undefined ? undefined : await ctx.root.input(args.tasks_file, 'tasks_file');
        const { box, task } = await createSandbox(defined({ task: args.task, tasksFile, image: args.image }));
        const held = ctx.sandboxes.add(box, task);
        return {
          summary: `created sandbox ${held.id}${task ? ` with task ${task.id}` : ''} (image ${box.config.image})`,
          data: { sandbox_id: held.id, container: box.id, task: task?.id ?? null, image: box.config.image, instruction: task?.instruction ?? null },
        };
      },
    }),
    defineTool({
      name: 'execute_tool',
      title: 'Run a tool in a sandbox',
      description: `Runs one tool call in a sandbox made by create_sandbox, in its /work directory, and returns the observation, exit code, whether the output was cut (16 KiB, head and tail kept) and the time taken. The tools and their parameters:\n${toolLines()}`,
      input: z
        .object({
          sandbox_id: sandboxId,
          tool: z.enum(names).describe(`one of ${names.join(', ')}`),
          params: z.record(z.string(), z.unknown()).default({}).describe('the tool\'s parameters, e.g. {"command": "pytest -q"} for shell, {"path": "units.py"} for file_read'),
        })
        .strict(),
      annotations: { destructiveHint: true, openWorldHint: false },
      async run(args, { ctx }) {
        const held = ctx.sandboxes.get(args.sandbox_id);
        const result = await runSandboxTool(held.box, held.task, { tool: args.tool, params: args.params }, held.id);
        return { summary: `${args.tool} in ${held.id}: exit ${result.exitCode}${result.truncated ? ' (output cut)' : ''}`, data: { sandbox_id: held.id, ...result } };
      },
    }),
    defineTool({
      name: 'reset_sandbox',
      title: 'Reset a sandbox',
      description: "Restores a sandbox's /work, /tmp and home exactly to its initial state: its task's repository as created, or empty without a task.",
      input: z.object({ sandbox_id: sandboxId }).strict(),
      annotations: { destructiveHint: true, idempotentHint: true, openWorldHint: false },
      async run(args, { ctx }) {
        const held = ctx.sandboxes.get(args.sandbox_id);
        const done = await resetSandbox(held.box, held.task);
        return { summary: `reset ${held.id} to ${held.task ? `task ${held.task.id}` : 'an empty /work'} in ${done.durationMs} ms`, data: { sandbox_id: held.id, task: held.task?.id ?? null, ...done } };
      },
    }),
    defineTool({
      name: 'sandbox_snapshot',
      title: "Save a sandbox's state",
      description:
        "Saves a sandbox's state as one tar file under the workspace root: the file-system diff of /work against its initial state (added, modified, deleted files with their contents) and the facts (container, task, git status, hardening). Returns the file and the lists of changed paths.",
      input: z
        .object({
          sandbox_id: sandboxId,
          out: relativePath.optional().describe('the snapshot file (.tar) under the root; default: a new file in .gymflow/mcp/'),
          force: z.boolean().default(false).describe('replace an existing out file'),
        })
        .strict(),
      annotations: { destructiveHint: false, openWorldHint: false },
      async run(args, { ctx }) {
        const held = ctx.sandboxes.get(args.sandbox_id);
        const out = args.out === undefined ? await resultFile(ctx, 'snapshot', 'tar') : await ctx.root.output(args.out, 'out');
        const diff = await snapshotSandbox(held.box, held.task, out, args.force);
        return {
          summary: `snapshot of ${held.id} in ${ctx.root.show(out)}: ${diff.added.length} added, ${diff.modified.length} modified, ${diff.deleted.length} deleted`,
          data: { sandbox_id: held.id, file: ctx.root.show(out), ...diff },
        };
      },
    }),
    defineTool({
      name: 'replay_trajectory',
      title: 'Replay a trajectory in a sandbox',
      description:
        "Replays a recorded gymflow/sandbox-v0 trajectory's actions one by one in a fresh sandbox of its task and reports the first step whose observation differs from the recorded one (run times such as '0.01s' masked unless exact), with both observations, and the recorded and replayed outcome. Reports progress per step.",
      input: z
        .object({
          trajectory: relativePath.describe('a trajectory JSON file, or a JSONL file (its first line), under the root'),
          tasks_file: relativePath.optional().describe('the tasks JSONL the trajectory was recorded with (default: the built-in tasks)'),
          exact: z.boolean().default(false).describe('compare observations byte for byte'),
        })
        .strict(),
      annotations: { readOnlyHint: true, openWorldHint: false },
      async run(args, { ctx, signal, progress }) {
        const file = await ctx.root.input(args.trajectory, 'trajectory');
        const tasksFile = args.tasks_file === undefined ? undefined : await ctx.root.input(args.tasks_file, 'tasks_file');
        const result = await replayTrajectory(readTrajectoryFile(file), tasksFile, args.exact, { signal, onStep: (n, total) => progress(n, total, `step ${n} of ${total}`) });
        const where = result.firstDivergentStep === null ? 'no divergence' : `diverges at step ${result.firstDivergentStep}`;
        return { summary: `replayed ${result.replayed}/${result.steps} steps of ${result.trajectory}: ${where}`, data: { ...result } };
      },
    }),
    defineTool({
      name: 'destroy_sandbox',
      title: 'Destroy a sandbox',
      description: 'Removes a sandbox made by create_sandbox (its container too). Sandboxes are also removed when the server stops.',
      input: z.object({ sandbox_id: sandboxId }).strict(),
      annotations: { destructiveHint: true, openWorldHint: false },
      async run(args, { ctx }) {
        await ctx.sandboxes.destroy(args.sandbox_id);
        return { summary: `destroyed ${args.sandbox_id}`, data: { sandbox_id: args.sandbox_id, destroyed: true } };
      },
    }),
    defineTool({
      name: 'list_sandboxes',
      title: 'List sandboxes',
      description: 'Lists the sandboxes this server holds: id, task, container, image, creation time.',
      input: z.object({}).strict(),
      annotations: { readOnlyHint: true, openWorldHint: false },
      async run(_args, { ctx }) {
        const rows = ctx.sandboxes.list().map((s) => ({ sandbox_id: s.id, task: s.task?.id ?? null, container: s.box.id, image: s.box.config.image, createdAt: s.createdAt }));
        return { summary: `${rows.length} sandbox(es)`, data: { sandboxes: rows } };
      },
    }),
  ];
}

/**
 * gymflow's MCP server: every tool and resource on one `McpServer`. The transports (stdio, Streamable HTTP) are
 * `gymflow mcp`'s; one server per connection, all sharing one {@link ToolContext} (the root and the sandboxes).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { PACKAGE_ROOT } from '../../core/package-root.js';
import { DEFAULT_MAX_INLINE_BYTES, registerTools, RESULTS_DIR, type ToolContext, type ToolDefinition } from './context.js';
import { registerResources } from './resources.js';
import type { WorkspaceRoot } from './root.js';
import { SandboxRegistry } from './sandboxes.js';
import { envTools } from './tools/envs.js';
import { exportTools } from './tools/export.js';
import { pipelineTools } from './tools/pipeline.js';
import { recorderTools } from './tools/recorder.js';
import { rewardTools } from './tools/reward.js';
import { sandboxTools } from './tools/sandbox.js';

const pkg = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string };

/** Every tool, grouped by the part it reaches. */
export function allTools(): ToolDefinition[] {
  return [...sandboxTools(), ...recorderTools(), ...rewardTools(), ...exportTools(), ...envTools(), ...pipelineTools()];
}

/** What an LLM reads about the server as a whole. */
function instructions(ctx: ToolContext): string {
  return [
    'gymflow trains tool-using LLM agents with reinforcement learning. These tools reach its parts:',
    '- agent logs: convert_logs, validate_logs, get_schema, recorder_diff; end to end with process_log / process_logs_batch;',
    '- process reward: score_trajectory, build_preferences, calibrate_reward, list_rubrics, reward_leaderboard;',
    '- Docker sandboxes: create_sandbox, then execute_tool / reset_sandbox / sandbox_snapshot / destroy_sandbox; replay_trajectory;',
    '- environments and evaluation: list_environments, run_episode, evaluate_agent, compare_evaluations; datasets: export_dataset;',
    '- training on Temporal: run_pipeline, pipeline_status, pause_pipeline, resume_pipeline, cancel_pipeline, list_pipelines.',
    `Every path is relative to the workspace root ${ctx.root.dir} (absolute paths must lie inside it). Large results are written to ${RESULTS_DIR}/ and returned as a file reference with a summary.`,
  ].join('\n');
}

/** Options of {@link createToolContext}. */
export interface ToolContextOptions {
  root: WorkspaceRoot;
  maxInlineBytes?: number;
  temporal?: { address?: string; namespace?: string };
}

/** The context one process's servers share. */
export function createToolContext(options: ToolContextOptions): ToolContext {
  return { root: options.root, sandboxes: new SandboxRegistry(), maxInlineBytes: options.maxInlineBytes ?? DEFAULT_MAX_INLINE_BYTES, temporal: options.temporal ?? {} };
}

/**
 * A gymflow MCP server on `ctx`, ready to connect to a transport.
 *
 * @example
 * ```ts
 * const ctx = createToolContext({ root: await WorkspaceRoot.open() });
 * await createMcpServer(ctx).connect(new StdioServerTransport());
 * ```
 */
export function createMcpServer(ctx: ToolContext): McpServer {
  const server = new McpServer({ name: 'gymflow', title: 'gymflow', version: pkg.version }, { capabilities: { tools: {}, resources: {}, logging: {} }, instructions: instructions(ctx) });
  registerTools(server, ctx, allTools());
  registerResources(server);
  return server;
}

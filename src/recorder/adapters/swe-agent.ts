import type { Outcome } from '../../core/trajectory.js';
import type { ConversionItem, ConvertContext, LogAdapter, LogSample } from '../adapter.js';
import { problem } from '../adapter.js';
import type { StepDraft } from '../assemble.js';
import { assembleTrajectory } from '../assemble.js';
import { ConversationSteps } from '../conversation.js';
import { convertDocuments } from '../document.js';
import { feedOpenAiMessages } from '../openai-messages.js';
import { terminated, truncated, unfinished } from '../outcome.js';
import type { JsonObject } from '../values.js';
import { arr, baseName, contentText, isRecord, joinText, num, omitKeys, parseToolArguments, rec, str } from '../values.js';

/** The `envId` of trajectories converted from this format. */
const ENV_ID = 'external/swe-agent-v0';

/**
 * SWE-agent `.traj` files (one JSON document per episode, read whole).
 *
 * - **Steps** come from `trajectory[]` (`action`, `observation`, `thought`, `execution_time`, `state`).
 *   For function-calling runs (1.x) the structured call is taken from the matching assistant message in
 *   `history[]` (matched in order by its `action` string): tool = the function name, params = its
 *   parsed arguments. Without a structured call (0.x text runs, or the last step that 1.x leaves out of
 *   `history`) the action is parsed from the command line: tool = the SWE-agent command when the first
 *   word is one ({@link SWE_AGENT_COMMANDS}: `edit`, `open`, `submit`, …), otherwise `bash`; params =
 *   `{ command: <the whole command line> }`.
 * - A file with only `history[]` (some demonstrations) is read as an OpenAI conversation.
 * - **Outcome** from `info.exit_status` (see {@link sweAgentOutcome}); success is never claimed, as a
 *   `.traj` does not say whether the patch resolves the issue.
 * - **Metadata**: `info` (submission, model_stats, edited files), `replayConfig`, `environment`, the
 *   system prompt and demonstrations from `history`; per step the raw `response` (when it differs from
 *   the thought), `state`, `executionTime` and the command line.
 */
export const sweAgentAdapter: LogAdapter = {
  name: 'swe-agent',
  description: 'SWE-agent .traj (0.x text commands and 1.x function calling)',
  envId: ENV_ID,
  detect: detectSweAgent,
  convert: convertSweAgent,
};

/**
 * The SWE-agent commands (default tool bundles of 0.x and 1.x) that become their own tool name when a
 * step's action is a command line; any other first word makes the step a `bash` call.
 */
export const SWE_AGENT_COMMANDS: ReadonlySet<string> = new Set([
  'open', 'goto', 'scroll_up', 'scroll_down', 'create', 'edit', 'insert', 'append', 'search_dir', 'search_file',
  'find_file', 'submit', 'filemap', 'str_replace_editor', 'exit_forfeit', 'view_image', 'open_site', 'close_site',
  'screenshot_site', 'click_mouse', 'double_click_mouse', 'move_mouse', 'drag_mouse', 'type_text', 'scroll_on_page',
  'execute_script_on_page', 'navigate_back', 'navigate_forward', 'reload_page', 'wait', 'press_keys_on_page',
  'set_browser_window_size', 'get_console_output',
]);

function detectSweAgent(sample: LogSample): number {
  const lower = sample.path.toLowerCase();
  const ext = lower.endsWith('.traj') ? 0.3 : 0;
  const doc = sample.firstRecord;
  if (isRecord(doc)) {
    const traj = arr(doc.trajectory);
    const hist = arr(doc.history);
    const t0 = traj[0];
    if (isRecord(t0) && 'action' in t0 && 'observation' in t0 && ('thought' in t0 || 'response' in t0)) return 0.95;
    const h0 = hist[0];
    if (isRecord(h0) && 'role' in h0 && ('agent' in h0 || 'message_type' in h0)) return 0.9;
    return ext > 0 && (Array.isArray(doc.trajectory) || Array.isArray(doc.history)) ? 0.6 : 0;
  }
  if (doc !== undefined) return 0;
  if (!/^\s*\{/.test(sample.head)) return 0;
  let score = ext;
  if (/"trajectory"\s*:\s*\[/.test(sample.head) && /"(thought|execution_time)"\s*:/.test(sample.head)) score += 0.6;
  else if (/"history"\s*:\s*\[/.test(sample.head) && /"(message_type|agent)"\s*:/.test(sample.head)) score += 0.5;
  return Math.min(score, 0.9);
}

function convertSweAgent(path: string, ctx: ConvertContext): AsyncGenerator<ConversionItem> {
  return convertDocuments(path, ctx, (doc) => convertSweAgentDocument(doc, path, ctx));
}

function* convertSweAgentDocument(doc: unknown, path: string, ctx: ConvertContext): Generator<ConversionItem> {
  if (!isRecord(doc) || (!Array.isArray(doc.trajectory) && !Array.isArray(doc.history))) {
    yield problem(ctx.file, '$', 'not a SWE-agent trajectory: expected an object with a "trajectory" or "history" array');
    return;
  }
  const warn = (p: string, m: string): ConversionItem => problem(ctx.file, p, m, { severity: 'warning' });
  const history = arr(doc.history);
  const info = rec(doc.info);
  const replayConfig = parseMaybeJson(doc.replay_config);

  // Prompt context from history: the system prompt, demonstrations and the first real user message.
  let systemPrompt: string | undefined;
  let instruction: string | undefined;
  const demonstrations: string[] = [];
  const actionMessages: JsonObject[] = [];
  for (const m of history) {
    if (!isRecord(m)) continue;
    if (m.is_demo === true) {
      demonstrations.push(contentText(m.content));
      continue;
    }
    if (m.role === 'system' && systemPrompt === undefined) systemPrompt = contentText(m.content);
    else if (m.role === 'user' && instruction === undefined) instruction = contentText(m.content);
    else if (m.role === 'assistant') actionMessages.push(m);
  }

  const problems: ConversionItem[] = [];
  let steps: StepDraft[];
  const trajectory = arr(doc.trajectory);
  if (trajectory.length > 0) {
    steps = [];
    let nextMessage = 0;
    trajectory.forEach((raw, i) => {
      const at = `$.trajectory[${i}]`;
      if (!isRecord(raw)) {
        problems.push(problem(ctx.file, at, 'expected a step object; skipped'));
        return;
      }
      const action = str(raw.action);
      if (action === undefined) {
        problems.push(problem(ctx.file, `${at}.action`, `expected a string, got ${JSON.stringify(raw.action)}; step skipped`));
        return;
      }
      // The structured call of this step, if history has it (matched in order by the action string).
      let callMessage: JsonObject | undefined;
      for (let j = nextMessage; j < actionMessages.length; j += 1) {
        if (str(actionMessages[j]?.action)?.trim() === action.trim()) {
          callMessage = actionMessages[j];
          nextMessage = j + 1;
          break;
        }
      }
      const metadata: JsonObject = { commandLine: action };
      let tool: string;
      let params: JsonObject;
      const calls = arr(callMessage?.tool_calls);
      const call = calls[0];
      if (isRecord(call) && isRecord(call.function) && str(call.function.name)) {
        tool = str(call.function.name) ?? 'bash';
        const parsed = parseToolArguments(call.function.arguments);
        if (parsed.warning) problems.push(warn(`${at}.action`, parsed.warning));
        params = parsed.params;
        metadata.actionSource = 'tool_call';
        if (str(call.id)) metadata.toolCallId = str(call.id);
        if (calls.length > 1) metadata.extraToolCalls = calls.slice(1);
      } else {
        ({ tool, params } = parseCommandLine(action));
        metadata.actionSource = 'command_line';
      }
      const thought = str(raw.thought);
      const response = str(raw.response);
      if (response !== undefined && response.trim() !== (thought ?? '').trim()) metadata.response = response;
      if (raw.state !== undefined) metadata.state = parseMaybeJson(raw.state);
      const seconds = num(raw.execution_time);
      if (seconds !== undefined) metadata.executionTime = seconds;
      Object.assign(metadata, omitKeys(raw, ['action', 'observation', 'thought', 'response', 'state', 'execution_time', 'query', 'messages']));
      steps.push({
        tool,
        params,
        observation: typeof raw.observation === 'string' ? raw.observation : contentText(raw.observation),
        thought,
        durationMs: seconds !== undefined ? seconds * 1000 : undefined,
        metadata,
      });
    });
  } else {
    // History only: an OpenAI-style conversation (text-based entries get their call from `action`).
    const conv = new ConversationSteps();
    const messages = history.filter((m) => !(isRecord(m) && m.is_demo === true)).map((m) => withCallFromAction(m));
    const fed = feedOpenAiMessages(conv, messages, { path: '$.history' });
    for (const p of fed.problems) problems.push(problem(ctx.file, p.path, p.message, { severity: p.severity }));
    const done = conv.finish();
    steps = done.steps;
    instruction = joinText(done.instruction) ?? instruction;
    systemPrompt = fed.systemPrompts[0] ?? systemPrompt;
  }
  yield* problems;

  const exitStatus = str(info.exit_status);
  const lastTool = steps[steps.length - 1]?.tool;
  const outcome = sweAgentOutcome(exitStatus, lastTool);
  const problemStatement = rec(rec(replayConfig).problem_statement);
  const model = str(rec(rec(rec(replayConfig).agent).model).name) ?? ctx.options.model;
  const taskId = str(problemStatement.id) ?? str(info.instance_id) ?? str(doc.instance_id) ?? baseName(path, ['.traj', '.json']);
  yield* assembleTrajectory(
    {
      task: {
        id: taskId,
        domain: 'coding',
        instruction: instruction ?? str(problemStatement.text) ?? '',
        metadata: { problemStatement: Object.keys(problemStatement).length > 0 ? problemStatement : undefined },
      },
      envId: ENV_ID,
      agent: { name: 'swe-agent', model },
      steps,
      outcome,
      metadata: {
        exitStatus,
        successKnown: false,
        outcomeInferred: exitStatus === undefined ? true : undefined,
        submission: str(info.submission),
        info: Object.keys(info).length > 0 ? omitKeys(info, ['submission']) : undefined,
        environment: doc.environment,
        replayConfig,
        systemPrompt,
        demonstrations: demonstrations.length > 0 ? demonstrations : undefined,
        ...omitKeys(doc, ['trajectory', 'history', 'info', 'replay_config', 'environment']),
      },
    },
    { format: sweAgentAdapter.name, file: ctx.file },
  );
}

/** The step action of a SWE-agent command line (see {@link SWE_AGENT_COMMANDS}). */
export function parseCommandLine(line: string): { tool: string; params: JsonObject } {
  const command = line.replace(/\s+$/, '');
  const first = /^\s*(\S+)/.exec(command)?.[1] ?? '';
  return { tool: SWE_AGENT_COMMANDS.has(first) ? first : 'bash', params: { command } };
}

/**
 * Outcome of a SWE-agent run from `info.exit_status`:
 * `submitted` → terminated/`submitted`; `submitted (exit_X)` (auto-submission after a limit or error) and
 * bare `exit_X` → truncated with `cost_limit` (`exit_cost`), `context_limit` (`exit_context`), `timeout`
 * (`exit_total_execution_time`, `exit_command_timeout`) or `error` (anything else); `exit_forfeit` →
 * terminated/`forfeited`. Without an exit status: terminated/`submitted` when the last step is `submit`,
 * else `unknown`.
 */
export function sweAgentOutcome(exitStatus: string | undefined, lastTool: string | undefined): Outcome {
  if (exitStatus === undefined || exitStatus === '') return lastTool === 'submit' ? terminated('submitted') : unfinished('unknown');
  const status = exitStatus.trim();
  if (status === 'submitted') return terminated('submitted');
  if (status === 'exit_forfeit') return terminated('forfeited');
  const inner = /^submitted \((.+)\)$/.exec(status)?.[1] ?? status;
  if (inner.includes('exit_cost')) return truncated('cost_limit');
  if (inner.includes('exit_context')) return truncated('context_limit');
  if (inner.includes('timeout') || inner.includes('execution_time')) return truncated('timeout');
  return truncated('error');
}

/** An assistant history message with only an `action` string gets a tool call parsed from it. */
function withCallFromAction(m: unknown): unknown {
  if (!isRecord(m) || m.role !== 'assistant' || arr(m.tool_calls).length > 0) return m;
  const action = str(m.action);
  if (!action || action.trim() === '') return m;
  const { tool, params } = parseCommandLine(action);
  return { ...m, content: str(m.thought) ?? m.content, tool_calls: [{ function: { name: tool, arguments: params } }] };
}

function parseMaybeJson(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}

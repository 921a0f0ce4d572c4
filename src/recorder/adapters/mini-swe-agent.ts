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
import { arr, baseName, contentText, isRecord, joinText, num, omitKeys, rec, str, toIsoTimestamp } from '../values.js';

/** The `envId` of trajectories converted from this format. */
const ENV_ID = 'external/mini-swe-agent-v0';

/**
 * mini-swe-agent trajectories (`*.traj.json`, one JSON document per episode, read whole), in all three
 * shapes: the legacy bare message array, `mini-swe-agent-1` (text actions) and `mini-swe-agent-1.1`
 * (tool calls).
 *
 * - **Text actions** (legacy, 1): each assistant message with exactly one ```` ```bash ```` (or
 *   ```` ```mswea_bash_command ````) block is a `bash` step with `params.command` = the block; the thought
 *   is the rest of the message; the observation is the next user message (`<returncode>…<output>…`),
 *   kept verbatim, with the return code also in `metadata.returncode`. A message with zero or several
 *   blocks is a format error mini-swe-agent rejected: it goes to `metadata.formatErrors` with the
 *   feedback it got, not into the steps.
 * - **Tool calls** (1.1): OpenAI messages; `extra.timestamp` of the assistant and tool messages give
 *   start time and duration; cost, usage and response ids go to step metadata; `raw_output` is kept when
 *   the observation does not contain it (the template elides long outputs). The final `exit` message
 *   answers a submit call left without a tool message.
 * - **Outcome** from `exit_status` (see {@link miniSweAgentOutcome}); without one (legacy), `submitted`
 *   when the last command is mini-swe-agent's submit echo.
 */
export const miniSweAgentAdapter: LogAdapter = {
  name: 'mini-swe-agent',
  description: 'mini-swe-agent .traj.json (legacy message list, 1.0 text actions, 1.1 tool calls)',
  envId: ENV_ID,
  detect: detectMini,
  convert: convertMini,
};

/** Commands that end a mini-swe-agent episode with a submission. */
const SUBMIT_ECHO = /^\s*echo\s+(COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT|MINI_SWE_AGENT_FINAL_OUTPUT)\b/;
const ACTION_BLOCK = /```(?:bash|mswea_bash_command)[^\S\n]*\n([\s\S]*?)\n```/g;

function detectMini(sample: LogSample): number {
  const ext = sample.path.toLowerCase().endsWith('.traj.json') ? 0.3 : 0;
  const doc = sample.firstRecord;
  if (isRecord(doc)) {
    if (str(doc.trajectory_format)?.startsWith('mini-swe-agent')) return 0.97;
    const info = rec(doc.info);
    const config = rec(info.config);
    if (Array.isArray(doc.messages) && (info.mini_version !== undefined || /minisweagent/.test(JSON.stringify(config).slice(0, 5000)))) return 0.9;
    return 0;
  }
  if (Array.isArray(doc)) {
    const looksLikeMessages = doc.length > 0 && doc.every((m) => isRecord(m) && typeof m.role === 'string' && 'content' in m);
    if (!looksLikeMessages) return 0;
    return /mswea_bash_command|<returncode>/.test(sample.head) ? 0.85 : ext > 0 ? 0.5 : 0;
  }
  if (doc !== undefined) return 0;
  if (/"trajectory_format"\s*:\s*"mini-swe-agent/.test(sample.head)) return 0.95;
  if (/"mini_version"\s*:/.test(sample.head) || /"minisweagent\./.test(sample.head)) return 0.85;
  if (/^\s*\[/.test(sample.head) && /mswea_bash_command|<returncode>/.test(sample.head)) return 0.7 + ext / 3;
  return 0;
}

function convertMini(path: string, ctx: ConvertContext): AsyncGenerator<ConversionItem> {
  return convertDocuments(path, ctx, (doc) => convertMiniDocument(doc, path, ctx));
}

function* convertMiniDocument(doc: unknown, path: string, ctx: ConvertContext): Generator<ConversionItem> {
  const messages = Array.isArray(doc) ? doc : isRecord(doc) && Array.isArray(doc.messages) ? doc.messages : undefined;
  if (!messages) {
    yield problem(ctx.file, '$', 'not a mini-swe-agent trajectory: expected a message array or an object with "messages"');
    return;
  }
  const top: JsonObject = isRecord(doc) ? doc : {};
  const info = rec(top.info);
  const format = str(top.trajectory_format) ?? (Array.isArray(doc) ? 'legacy' : undefined);
  const toolCalling = messages.some((m) => isRecord(m) && m.role === 'assistant' && arr(m.tool_calls).length > 0);

  const problems: ConversionItem[] = [];
  let steps: StepDraft[];
  let instruction: string;
  let systemPrompt: string | undefined;
  const metadata: JsonObject = {};
  let exitExtra: JsonObject = {};

  if (toolCalling) {
    const conv = new ConversationSteps();
    const fed = feedOpenAiMessages(conv, messages, {
      path: '$.messages',
      assistantInfo: (m) => {
        const extra = rec(m.extra);
        const response = rec(extra.response);
        return {
          startedAt: toIsoTimestamp(extra.timestamp),
          metadata: {
            cost: num(extra.cost),
            usage: response.usage,
            responseId: str(response.id),
            responseModel: str(response.model),
            ...omitKeys(extra, ['timestamp', 'cost', 'response', 'actions']),
          },
        };
      },
      toolInfo: (m) => {
        const extra = rec(m.extra);
        const content = contentText(m.content);
        const raw = str(extra.raw_output);
        const exception = str(extra.exception_info);
        return {
          endedAt: toIsoTimestamp(extra.timestamp),
          metadata: {
            returncode: extra.returncode,
            exceptionInfo: exception !== undefined && exception !== '' ? exception : undefined,
            rawOutput: raw !== undefined && !content.includes(raw) ? raw : undefined,
            ...omitKeys(extra, ['timestamp', 'returncode', 'raw_output', 'exception_info']),
          },
        };
      },
      otherRole: (m) => {
        if (m.role !== 'exit') return false;
        exitExtra = rec(m.extra);
        const content = contentText(m.content);
        // The submit call gets no tool message: the exit message carries what it produced.
        for (const step of [...conv.openCalls]) {
          conv.toolResult({ id: str(step.metadata.toolCallId), observation: content, metadata: { observationSource: 'exit' } });
        }
        metadata.exitMessage = content;
        return true;
      },
    });
    for (const p of fed.problems) problems.push(problem(ctx.file, p.path, p.message, { severity: p.severity }));
    const done = conv.finish();
    steps = done.steps;
    instruction = joinText(done.instruction) ?? '';
    systemPrompt = fed.systemPrompts[0];
  } else {
    const text = convertTextActions(messages);
    steps = text.steps;
    instruction = text.instruction;
    systemPrompt = text.systemPrompt;
    if (text.formatErrors.length > 0) metadata.formatErrors = text.formatErrors;
    for (const p of text.problems) problems.push(problem(ctx.file, p.path, p.message, { severity: 'warning' }));
  }
  yield* problems;

  const exitStatus = str(exitExtra.exit_status) ?? str(info.exit_status);
  const outcome = miniSweAgentOutcome(exitStatus, steps[steps.length - 1]);
  const config = rec(info.config);
  const model = str(rec(config.model).model_name) ?? ctx.options.model;
  yield* assembleTrajectory(
    {
      task: {
        id: str(top.instance_id) ?? str(info.instance_id) ?? baseName(path, ['.traj.json', '.json']),
        domain: 'coding',
        instruction,
      },
      envId: ENV_ID,
      agent: { name: 'mini-swe-agent', model },
      steps,
      outcome,
      metadata: {
        trajectoryFormat: format,
        exitStatus,
        successKnown: false,
        outcomeInferred: exitStatus === undefined ? true : undefined,
        submission: str(exitExtra.submission) ?? str(info.submission),
        exceptionStr: str(exitExtra.exception_str) ?? str(info.exception_str),
        traceback: str(exitExtra.traceback) ?? str(info.traceback),
        info: Object.keys(info).length > 0 ? omitKeys(info, ['submission', 'exception_str', 'traceback']) : undefined,
        systemPrompt,
        ...metadata,
        ...omitKeys(top, ['info', 'messages', 'trajectory_format', 'instance_id']),
      },
    },
    { format: miniSweAgentAdapter.name, file: ctx.file },
  );
}

/** Steps of a text-action conversation (legacy and `mini-swe-agent-1`). */
function convertTextActions(messages: readonly unknown[]): {
  steps: StepDraft[];
  instruction: string;
  systemPrompt: string | undefined;
  formatErrors: JsonObject[];
  problems: { path: string; message: string }[];
} {
  const steps: StepDraft[] = [];
  const formatErrors: JsonObject[] = [];
  const problems: { path: string; message: string }[] = [];
  let systemPrompt: string | undefined;
  let instruction: string | undefined;
  for (let i = 0; i < messages.length; i += 1) {
    const m = messages[i];
    if (!isRecord(m)) {
      problems.push({ path: `$[${i}]`, message: 'expected a message object; skipped' });
      continue;
    }
    const content = contentText(m.content);
    if (m.role === 'system') {
      systemPrompt ??= content;
      continue;
    }
    if (m.role === 'user') {
      if (instruction === undefined) instruction = content;
      else {
        const last = steps[steps.length - 1];
        if (last) ((last.metadata.userMessages ??= []) as unknown[]).push(content);
      }
      continue;
    }
    if (m.role !== 'assistant') {
      problems.push({ path: `$[${i}].role`, message: `unexpected role ${JSON.stringify(m.role)}; message skipped` });
      continue;
    }
    const blocks = [...content.matchAll(ACTION_BLOCK)];
    const next = messages[i + 1];
    const reply = isRecord(next) && next.role === 'user' ? contentText(next.content) : undefined;
    if (reply !== undefined) i += 1;
    const extra = rec(m.extra);
    if (blocks.length !== 1) {
      formatErrors.push({ messageIndex: i - (reply !== undefined ? 1 : 0), content, blocks: blocks.length, feedback: reply });
      continue;
    }
    const block = blocks[0];
    const command = block?.[1] ?? '';
    const thought = joinText([content.replace(block?.[0] ?? '', '')]);
    const metadata: JsonObject = {};
    const rc = /<returncode>(-?\d+)<\/returncode>/.exec(reply ?? '');
    if (rc?.[1] !== undefined) metadata.returncode = Number(rc[1]);
    if (SUBMIT_ECHO.test(command)) metadata.submits = true;
    if (Object.keys(extra).length > 0) metadata.extra = extra;
    const replyExtra = isRecord(next) ? rec(next.extra) : {};
    const startedAt = toIsoTimestamp(extra.timestamp);
    const endedAt = toIsoTimestamp(replyExtra.timestamp);
    steps.push({
      tool: 'bash',
      params: { command },
      observation: reply ?? '',
      thought,
      startedAt,
      durationMs: startedAt && endedAt ? Math.max(0, Date.parse(endedAt) - Date.parse(startedAt)) : undefined,
      metadata,
    });
  }
  return { steps, instruction: instruction ?? '', systemPrompt, formatErrors, problems };
}

/**
 * Outcome of a mini-swe-agent run: `Submitted` → terminated/`submitted`; `LimitsExceeded` →
 * truncated/`limits_exceeded` (step or cost limit); any other exit status (an exception class name such
 * as `InternalServerError`) → truncated/`error`. Without one: terminated/`submitted` when the last step
 * is the submit echo, else `unknown`.
 */
export function miniSweAgentOutcome(exitStatus: string | undefined, last: StepDraft | undefined): Outcome {
  if (exitStatus === undefined || exitStatus === '') {
    const command = str(last?.params.command);
    return command !== undefined && SUBMIT_ECHO.test(command) ? terminated('submitted') : unfinished('unknown');
  }
  if (exitStatus === 'Submitted') return terminated('submitted');
  if (exitStatus === 'LimitsExceeded') return truncated('limits_exceeded');
  return truncated('error');
}

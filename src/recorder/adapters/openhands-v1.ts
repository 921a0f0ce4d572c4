import type { Outcome } from '../../core/trajectory.js';
import type { ConversionItem, ConvertContext, LogAdapter, LogSample } from '../adapter.js';
import { problem } from '../adapter.js';
import type { StepDraft } from '../assemble.js';
import { assembleTrajectory, RESPOND_TOOL } from '../assemble.js';
import { ConversationSteps } from '../conversation.js';
import { readJsonDocuments } from '../document.js';
import { clampScore, terminated, truncated, unfinished } from '../outcome.js';
import type { JsonObject } from '../values.js';
import { arr, baseName, contentText, isRecord, joinText, nonTextBlocks, num, omitKeys, parseToolArguments, rec, str, toIsoTimestamp } from '../values.js';

/** The `envId` of trajectories converted from this format: OpenHands, version 1 (the agent SDK). */
const ENV_ID = 'external/openhands-v1';

/**
 * OpenHands V1 runs: the events of the OpenHands agent SDK (`openhands-sdk`, `kind`-tagged pydantic models),
 * as OpenHands' benchmarks write them in `output.jsonl` (one `EvalOutput` per line: `instance_id`, `attempt`,
 * `test_result`, `instruction`, `history` of events, `metrics`, `error`, …), streamed line by line with one
 * trajectory per line. A JSON document holding one run (an `EvalOutput`, an object with `history` or
 * `events`, or an array of events) converts too, and so does a JSONL file of single events (a conversation's
 * event log, one event per line), as one trajectory.
 *
 * - **Steps**: each `ActionEvent` is a step: tool = `tool_name`, params = the model's call
 *   (`tool_call.arguments`) without the SDK's own `security_risk` and `summary` keys (kept in metadata as
 *   `securityRisk` and `summary`); thought = the event's `reasoning_content` and `thought` text. Calls from
 *   one response (`llm_response_id`) form a parallel group. A call the SDK could not execute (`action:
 *   null`) keeps its raw arguments and gets `metadata.notExecuted`. An agent `MessageEvent` is a `respond`
 *   step whose observation is the user's next message (the benchmarks' fake user reply).
 * - **Observations** pair with calls by `tool_call_id`: an `ObservationEvent`'s text content (`observation.
 *   is_error` sets the step error; its other fields, such as `exit_code`, go to `metadata.observationFields`),
 *   an `AgentErrorEvent` (a tool error), a `UserRejectObservation` (an error `Action rejected: <reason>`).
 * - **Tokens**: a `TokenEvent` (vLLM prompt and response token ids) goes to the first step of the response
 *   before it as `tokens`.
 * - **Task**: id = `instance_id` (else the file name, with `:line` in a JSONL file); instruction =
 *   `instruction`, else the first user message.
 * - **Outcome**: `test_result` holds the verdict when the benchmark scored the run itself: `resolved`,
 *   `report.resolved` or `success` (booleans), or `score` (a boolean, or a number in [0, 1], success at 1);
 *   else success is unknown (SWE-bench scores `git_patch` in a later step). A run with an `error` or a
 *   `ConversationErrorEvent`, and no `finish`, is truncated/`error`; a last step `finish` is
 *   terminated/`finished`; otherwise the last `execution_status`: `finished` → terminated (`responded` after a
 *   reply), `error` → truncated/`error`, `stuck` → truncated/`stuck`, `paused` → truncated/`stopped`.
 * - **Metadata**: `testResult`, `metrics`, `error`, `attempt`, `evalMetadata`, `instance`, `runtimeRuns`,
 *   the system prompt and tool list, execution statuses, conversation errors, other events; per step the
 *   event and call ids, the action's `kind`, the response's token usage and latency (from
 *   `metrics.token_usages` and `response_latencies`, by response id).
 */
export const openHandsV1Adapter: LogAdapter = {
  name: 'openhands-v1',
  description: "OpenHands V1 (agent SDK) runs: benchmarks' output.jsonl (one EvalOutput per line) or a conversation's events",
  envId: ENV_ID,
  detect: detectV1,
  convert: convertV1,
};

/** The `kind`s of the SDK's events (`openhands.sdk.event`). */
const EVENT_KINDS = new Set([
  'ActionEvent',
  'ObservationEvent',
  'MessageEvent',
  'SystemPromptEvent',
  'AgentErrorEvent',
  'UserRejectObservation',
  'ConversationStateUpdateEvent',
  'ConversationErrorEvent',
  'Condensation',
  'CondensationRequest',
  'CondensationSummaryEvent',
  'PauseEvent',
  'InterruptEvent',
  'TokenEvent',
  'HookExecutionEvent',
  'LLMCompletionLogEvent',
  'StreamingDeltaEvent',
  'ACPToolCallEvent',
]);

/** Events that are counted, never kept: they repeat the conversation at length. */
const COUNTED_ONLY = new Set(['LLMCompletionLogEvent', 'StreamingDeltaEvent']);

/** Keys of an `EvalOutput` this adapter maps; the others go to trajectory metadata as they are. */
const RUN_KEYS = ['instance_id', 'attempt', 'test_result', 'instruction', 'metadata', 'history', 'events', 'metrics', 'error', 'instance', 'runtime_runs'];

/** Keys the SDK adds to every tool call's arguments (`Agent._extract_security_risk`, `_extract_summary`). */
const SDK_ARGUMENT_KEYS = ['security_risk', 'summary'];

/** True for a serialised SDK event: a known `kind` and a `source`. */
export function isV1Event(value: unknown): boolean {
  return isRecord(value) && typeof value.kind === 'string' && EVENT_KINDS.has(value.kind) && typeof value.source === 'string';
}

function detectV1(sample: LogSample): number {
  const doc = sample.firstRecord;
  if (Array.isArray(doc)) return doc.some(isV1Event) ? 0.95 : 0;
  if (isRecord(doc)) {
    if (isV1Event(doc)) return 0.9;
    const events = Array.isArray(doc.history) ? doc.history : Array.isArray(doc.events) ? doc.events : undefined;
    if (!events) return 0;
    if (events.some(isV1Event)) return 0.97;
    // A run that failed before any event: `attempt` is V1's (the V0 EvalOutput has none).
    const evalOutput = typeof doc.instance_id === 'string' && typeof doc.attempt === 'number' && isRecord(doc.test_result);
    return events.length === 0 && evalOutput ? 0.8 : 0;
  }
  if (doc !== undefined) return 0;
  // The head is cut inside the first record (a long run): look at its text.
  const kinds = /"kind"\s*:\s*"(ActionEvent|ObservationEvent|MessageEvent|SystemPromptEvent|ConversationStateUpdateEvent)"/.test(sample.head);
  if (kinds && /^\s*[[{]/.test(sample.head)) return 0.85;
  return /^\s*\{\s*"instance_id"\s*:\s*"[^"]*"\s*,\s*"attempt"\s*:\s*\d+\s*,\s*"test_result"\s*:/.test(sample.head) ? 0.75 : 0;
}

/** A run's events with where each came from, for problem reports. */
interface RunSource {
  events: unknown[];
  /** The `EvalOutput` (or other object) around the events; absent for a bare event list. */
  run: JsonObject | undefined;
  /** The JSONL line of the run (absent for a whole-file document). */
  line: number | undefined;
  /** Where event `i` is: its JSON path and, for events one per line, its own line. */
  place(i: number): { path: string; line: number | undefined };
}

async function* convertV1(path: string, ctx: ConvertContext): AsyncGenerator<ConversionItem> {
  // Events one per line (a conversation's event log) are gathered into one run.
  let lines: { events: JsonObject[]; lines: number[] } | undefined;
  const flush = function* (): Generator<ConversionItem> {
    if (!lines) return;
    const { events, lines: at } = lines;
    lines = undefined;
    yield* convertRun({ events, run: undefined, line: at[0], place: (i) => ({ path: '$', line: at[i] }) }, path, ctx);
  };
  for await (const doc of readJsonDocuments(path, ctx.file)) {
    if (!doc.ok) {
      yield doc.problem;
      continue;
    }
    const { value, line } = doc;
    if (line !== undefined && isV1Event(value)) {
      lines ??= { events: [], lines: [] };
      lines.events.push(value as JsonObject);
      lines.lines.push(line);
      continue;
    }
    yield* flush();
    if (Array.isArray(value)) {
      yield* convertRun({ events: value, run: undefined, line, place: (i) => ({ path: `$[${i}]`, line }) }, path, ctx);
      continue;
    }
    if (!isRecord(value)) {
      yield problem(ctx.file, '$', `expected an OpenHands run (an object with "history") or an event list, got ${JSON.stringify(value)?.slice(0, 40)}; skipped`, { line });
      continue;
    }
    const key = Array.isArray(value.history) ? 'history' : Array.isArray(value.events) ? 'events' : undefined;
    if (key === undefined) {
      yield problem(ctx.file, '$.history', `expected an array of events, got ${JSON.stringify(value.history)?.slice(0, 40) ?? 'nothing'}; skipped`, { line });
      continue;
    }
    yield* convertRun({ events: value[key] as unknown[], run: value, line, place: (i) => ({ path: `$.${key}[${i}]`, line }) }, path, ctx);
  }
  yield* flush();
}

/** A response's usage and latency from `metrics` (`token_usages`, `response_latencies`), by response id. */
function responseStats(metrics: JsonObject): Map<string, JsonObject> {
  const out = new Map<string, JsonObject>();
  for (const u of arr(metrics.token_usages)) {
    const id = str(rec(u).response_id);
    if (id) out.set(id, { ...out.get(id), usage: omitKeys(rec(u), ['model', 'response_id']) });
  }
  for (const l of arr(metrics.response_latencies)) {
    const id = str(rec(l).response_id);
    const latency = num(rec(l).latency);
    if (id && latency !== undefined) out.set(id, { ...out.get(id), latencySeconds: latency });
  }
  return out;
}

/** The texts of a list of `TextContent`s. */
function texts(content: unknown): string {
  return contentText(content);
}

function* convertRun(source: RunSource, path: string, ctx: ConvertContext): Generator<ConversionItem> {
  const { events, run, line } = source;
  const conv = new ConversationSteps();
  const stats = responseStats(rec(run?.metrics));
  const statuses: JsonObject[] = [];
  const conversationErrors: JsonObject[] = [];
  const otherEvents: JsonObject[] = [];
  const counted: Record<string, number> = {};
  const problems: ConversionItem[] = [];
  let systemPrompt: string | undefined;
  let systemContext: string | undefined;
  let tools: JsonObject[] | undefined;
  let statsModel: string | undefined;
  // The first step of the latest model response, which a TokenEvent after it belongs to.
  let responseStep: StepDraft | undefined;
  let responseGroup: string | undefined;

  events.forEach((event, i) => {
    const at = source.place(i);
    if (!isRecord(event)) {
      problems.push(problem(ctx.file, at.path, 'expected an event object; skipped', { line: at.line }));
      return;
    }
    const kind = str(event.kind);
    const timestamp = toIsoTimestamp(event.timestamp);
    const id = str(event.id);
    switch (kind) {
      case 'SystemPromptEvent': {
        systemPrompt = str(rec(event.system_prompt).text);
        systemContext = str(rec(event.dynamic_context).text);
        tools = arr(event.tools).map((t) => {
          const tool = rec(t);
          return { title: tool.title, kind: tool.kind, actionType: tool.action_type, observationType: tool.observation_type };
        });
        return;
      }
      case 'MessageEvent': {
        const message = rec(event.llm_message);
        const text = texts(message.content);
        const extended = texts(event.extended_content);
        const fromAgent = event.source === 'agent' || message.role === 'assistant';
        if (!fromAgent) {
          conv.user(text);
          const images = nonTextBlocks(message.content);
          if (images.length > 0) conv.note('userImages', images);
          if (arr(event.activated_skills).length > 0) conv.note('activatedSkills', event.activated_skills);
          if (extended !== '') conv.note('extendedContent', extended);
          return;
        }
        const group = str(event.llm_response_id) ?? `event-${id ?? i}`;
        const before = conv.steps.length;
        conv.assistant(group, { startedAt: timestamp, metadata: { eventId: id, llmResponseId: str(event.llm_response_id), ...stats.get(group) } });
        const reasoning = str(message.reasoning_content);
        if (reasoning && !text.includes(reasoning.trim())) conv.thinking(reasoning);
        conv.text(text);
        conv.endAssistant();
        const step = conv.steps.length > before ? conv.steps[conv.steps.length - 1] : undefined;
        if (step?.tool === RESPOND_TOOL) {
          responseStep = step;
          responseGroup = group;
        }
        return;
      }
      case 'ActionEvent': {
        const call = rec(event.tool_call);
        const group = str(event.llm_response_id) ?? `event-${id ?? i}`;
        const callId = str(event.tool_call_id) ?? str(call.id);
        conv.assistant(group, { startedAt: timestamp, metadata: { llmResponseId: str(event.llm_response_id), ...stats.get(group) } });
        const thought = texts(event.thought);
        const reasoning = str(event.reasoning_content);
        if (reasoning && !thought.includes(reasoning.trim())) conv.thinking(reasoning);
        else if (!reasoning) for (const block of arr(event.thinking_blocks)) if (str(rec(block).thinking)) conv.thinking(str(rec(block).thinking) as string);
        if (thought !== '') conv.text(thought);
        const action = isRecord(event.action) ? event.action : undefined;
        const parsed = parseToolArguments(call.arguments);
        if (parsed.warning) problems.push(problem(ctx.file, `${at.path}.tool_call.arguments`, parsed.warning, { line: at.line, severity: 'warning' }));
        // A tool may declare `summary` itself: then the validated action has it and it stays a parameter.
        const sdkKeys = action && 'summary' in action ? ['security_risk'] : SDK_ARGUMENT_KEYS;
        const params = omitKeys(parsed.params, sdkKeys);
        const risk = str(parsed.params.security_risk) ?? str(event.security_risk);
        const step = conv.toolCall({
          id: callId,
          tool: str(event.tool_name) ?? str(call.name) ?? 'unknown',
          params,
          startedAt: timestamp,
          metadata: {
            eventId: id,
            actionKind: str(action?.kind),
            notExecuted: action ? undefined : true,
            summary: str(event.summary) ?? str(parsed.params.summary),
            securityRisk: risk !== undefined && risk !== 'UNKNOWN' ? risk : undefined,
            criticResult: isRecord(event.critic_result) ? event.critic_result : undefined,
          },
        });
        if (group !== responseGroup) {
          responseStep = step;
          responseGroup = group;
        }
        return;
      }
      case 'ObservationEvent': {
        const observation = rec(event.observation);
        const fields = omitKeys(observation, ['content', 'is_error', 'kind']);
        const images = nonTextBlocks(observation.content);
        const matched = conv.toolResult({
          id: str(event.tool_call_id),
          observation: texts(observation.content),
          isError: observation.is_error === true,
          endedAt: timestamp,
          metadata: {
            observationEventId: id,
            observationKind: str(observation.kind),
            exitCode: num(observation.exit_code) ?? num(rec(observation.metadata).exit_code),
            observationFields: Object.keys(fields).length > 0 ? fields : undefined,
            observationImages: images.length > 0 ? images : undefined,
          },
        });
        if (!matched) problems.push(problem(ctx.file, at.path, `observation for tool call ${JSON.stringify(event.tool_call_id)} answers no call; kept in metadata.unmatchedObservations`, { line: at.line, severity: 'warning' }));
        return;
      }
      case 'AgentErrorEvent':
      case 'UserRejectObservation': {
        const rejected = kind === 'UserRejectObservation';
        const reason = str(event.rejection_reason) ?? 'User rejected the action';
        const matched = conv.toolResult({
          id: str(event.tool_call_id),
          observation: rejected ? `Action rejected: ${reason}` : (str(event.error) ?? ''),
          isError: true,
          endedAt: timestamp,
          metadata: rejected
            ? { observationEventId: id, observationKind: kind, rejection: { reason, source: event.rejection_source } }
            : { observationEventId: id, observationKind: kind, errorClassification: event.classification },
        });
        if (!matched) problems.push(problem(ctx.file, at.path, `${kind} for tool call ${JSON.stringify(event.tool_call_id)} answers no call; kept in metadata.unmatchedObservations`, { line: at.line, severity: 'warning' }));
        return;
      }
      case 'ConversationStateUpdateEvent': {
        const key = str(event.key) ?? '';
        const value = event.value;
        const status = key === 'execution_status' ? str(value) : key === 'full_state' ? str(rec(value).execution_status) : undefined;
        if (status !== undefined) statuses.push({ status, timestamp });
        if (key === 'stats') statsModel = str(rec(rec(rec(value).usage_to_metrics).agent).model_name) ?? str(rec(rec(rec(value).usage_to_metrics).default).model_name) ?? statsModel;
        counted[`ConversationStateUpdateEvent:${key}`] = (counted[`ConversationStateUpdateEvent:${key}`] ?? 0) + 1;
        return;
      }
      case 'ConversationErrorEvent':
        conversationErrors.push({ code: event.code, detail: event.detail, classification: event.classification, timestamp, eventId: id });
        return;
      case 'TokenEvent': {
        const prompt = intArray(event.prompt_token_ids);
        const completion = intArray(event.response_token_ids);
        if (responseStep && responseStep.tokens === undefined && (prompt || completion)) {
          responseStep.tokens = {};
          if (prompt) responseStep.tokens.prompt = prompt;
          if (completion) responseStep.tokens.completion = completion;
        } else {
          otherEvents.push(event);
        }
        return;
      }
      default:
        if (kind === undefined) {
          problems.push(problem(ctx.file, at.path, 'event without a "kind"; kept in metadata.otherEvents', { line: at.line, severity: 'warning' }));
          otherEvents.push(event);
        } else if (COUNTED_ONLY.has(kind)) counted[kind] = (counted[kind] ?? 0) + 1;
        else otherEvents.push(event);
    }
  });
  yield* problems;

  const done = conv.finish(['finish']);
  const lastTool = done.steps[done.steps.length - 1]?.tool;
  const lastStatus = str(statuses[statuses.length - 1]?.status);
  const verdict = testResultVerdict(run?.test_result);
  const error = str(run?.error);
  const failed = (error !== undefined && error !== '') || conversationErrors.length > 0;
  const outcome = failed && lastTool !== 'finish' ? truncated('error', verdict.verdict) : v1Outcome(lastTool, lastStatus, done.openCalls, verdict.verdict);
  const metrics = rec(run?.metrics);
  const evalModel = str(rec(rec(run?.metadata).llm).model);
  const metricsModel = str(metrics.model_name) !== 'default' ? str(metrics.model_name) : undefined;
  const model = evalModel ?? metricsModel ?? str(rec(metrics.accumulated_token_usage).model) ?? statsModel ?? ctx.options.model;
  const instanceId = str(run?.instance_id);
  const taskId = instanceId !== undefined && instanceId !== '' ? instanceId : `${baseName(path, ['.jsonl', '.json'])}${line !== undefined ? `:${line}` : ''}`;
  yield* assembleTrajectory(
    {
      task: { id: taskId, domain: 'coding', instruction: str(run?.instruction) ?? joinText(done.instruction) ?? '' },
      envId: ENV_ID,
      agent: { name: 'openhands', model: model !== '' ? model : undefined },
      steps: done.steps,
      outcome,
      metadata: {
        successKnown: verdict.source !== undefined,
        successSource: verdict.source,
        attempt: run?.attempt,
        testResult: run?.test_result,
        error: run?.error ?? undefined,
        metrics: run?.metrics ?? undefined,
        evalMetadata: run?.metadata ?? undefined,
        instance: run?.instance ?? undefined,
        runtimeRuns: run?.runtime_runs ?? undefined,
        systemPrompt,
        systemContext,
        tools,
        executionStatuses: statuses.length > 0 ? statuses : undefined,
        conversationErrors: conversationErrors.length > 0 ? conversationErrors : undefined,
        otherEvents: otherEvents.length > 0 ? otherEvents : undefined,
        countedEvents: Object.keys(counted).length > 0 ? counted : undefined,
        unmatchedObservations: conv.unmatchedResults.length > 0 ? conv.unmatchedResults : undefined,
        trailingThought: done.trailingThought,
        preStepNotes: Object.keys(conv.preStepNotes).length > 0 ? conv.preStepNotes : undefined,
        ...(run ? omitKeys(run, RUN_KEYS) : {}),
      },
    },
    { format: openHandsV1Adapter.name, file: ctx.file, line },
  );
}

/** The ids when the value is an array of integers. */
function intArray(value: unknown): number[] | undefined {
  return Array.isArray(value) && value.every((v) => Number.isInteger(v)) ? (value as number[]) : undefined;
}

/**
 * The verdict a benchmark wrote into `test_result`, and which field gave it: `resolved`, `report.resolved`,
 * `success` (booleans) or `score` (a boolean, or a number clamped to [0, 1]; success only at 1).
 */
export function testResultVerdict(testResult: unknown): { verdict: { success?: boolean; score?: number }; source?: string } {
  const t = rec(testResult);
  if (typeof t.resolved === 'boolean') return { verdict: { success: t.resolved }, source: 'test_result.resolved' };
  const report = rec(t.report);
  if (typeof report.resolved === 'boolean') return { verdict: { success: report.resolved }, source: 'test_result.report.resolved' };
  if (typeof t.success === 'boolean') return { verdict: { success: t.success }, source: 'test_result.success' };
  if (typeof t.score === 'boolean') return { verdict: { success: t.score }, source: 'test_result.score' };
  const score = num(t.score);
  if (score !== undefined) return { verdict: { success: score >= 1, score: clampScore(score) }, source: 'test_result.score' };
  return { verdict: {} };
}

/** How a V1 run ended, from its last step and its last `execution_status` (see the adapter's notes). */
function v1Outcome(lastTool: string | undefined, lastStatus: string | undefined, openCalls: number, verdict: { success?: boolean; score?: number }): Outcome {
  if (lastTool === 'finish') return terminated('finished', verdict);
  switch (lastStatus) {
    case 'finished':
      return terminated(lastTool === RESPOND_TOOL ? 'responded' : 'finished', verdict);
    case 'error':
      return truncated('error', verdict);
    case 'stuck':
      return truncated('stuck', verdict);
    case 'paused':
      return truncated('stopped', verdict);
    default:
      if (lastTool === RESPOND_TOOL && openCalls === 0) return terminated('responded', verdict);
      return unfinished(openCalls > 0 ? 'incomplete' : 'unknown', verdict);
  }
}

import type { ConversionItem, ConvertContext, LogAdapter, LogSample } from '../adapter.js';
import { problem } from '../adapter.js';
import { assembleTrajectory } from '../assemble.js';
import { ConversationSteps } from '../conversation.js';
import { convertDocuments } from '../document.js';
import { actionBookkeeping, actionToCall, openHandsOutcome } from '../openhands-actions.js';
import type { JsonObject } from '../values.js';
import { arr, baseName, isRecord, joinText, num, omitKeys, parseToolArguments, rec, str, toIsoTimestamp } from '../values.js';

/** The `envId` of trajectories converted from this format. */
const ENV_ID = 'external/openhands-v0';

/**
 * OpenHands event streams as saved by "download trajectory" / `tests/runtime/trajs` (a JSON array of
 * serialised events, one episode per file, read whole).
 *
 * - **Steps**: each agent action with `tool_call_metadata` is a step: tool = `function_name`, params =
 *   the call's arguments from the recorded `model_response` (falling back to the action's `args`),
 *   thought = `args.thought` (or the response's text). Actions without function-call metadata are mapped
 *   by action type (see `openhands-actions.ts`); an agent `message` is a `respond` step whose
 *   observation is the user's next message.
 * - **Observations** pair with actions through `cause`; observation = `content`; the observation type,
 *   exit code and `extras` go to step metadata; an `error` observation sets the step error.
 * - **Instruction**: the user's first message. Timestamps are real (naive times are taken as UTC).
 * - **Outcome**: a final `finish` → terminated/`finished`; else the last agent state (see
 *   `openHandsOutcome`). Success is never claimed: the stream has no verdict.
 * - **Metadata**: agent-state changes, the model's usage per response, other events (state changes,
 *   `NullObservation`s counted), user images.
 */
export const openHandsEventsAdapter: LogAdapter = {
  name: 'openhands-events',
  description: 'OpenHands event stream (JSON array of actions and observations)',
  envId: ENV_ID,
  detect: detectEvents,
  convert: convertEvents,
};

function detectEvents(sample: LogSample): number {
  const doc = sample.firstRecord;
  if (Array.isArray(doc) || isRecord(doc)) {
    const events = eventList(doc);
    if (!events || events.length === 0) return 0;
    // V0 events name their type in a string `action` or `observation`; the V1 SDK's carry objects there and a
    // `kind` (the openhands-v1 format).
    const evented = events.filter((e) => isRecord(e) && (typeof e.action === 'string' || typeof e.observation === 'string') && ('source' in e || 'id' in e));
    return evented.length >= Math.min(events.length, 3) ? 0.95 : evented.length > 0 ? 0.6 : 0;
  }
  if (doc !== undefined) return 0;
  const source = /"source"\s*:\s*"(agent|user|environment)"/.test(sample.head);
  const kind = /"(action|observation)"\s*:\s*"/.test(sample.head);
  if (/^\s*\[/.test(sample.head)) return source && kind ? 0.85 : 0;
  // A V0 evaluation output.jsonl whose first run is longer than the head.
  if (/^\s*\{\s*"instance_id"\s*:/.test(sample.head) && /"history"\s*:\s*\[/.test(sample.head)) return source && kind ? 0.7 : 0;
  return 0;
}

function eventList(doc: unknown): unknown[] | undefined {
  if (Array.isArray(doc)) return doc;
  if (isRecord(doc)) {
    for (const key of ['history', 'events', 'trajectory']) if (Array.isArray(doc[key])) return doc[key] as unknown[];
  }
  return undefined;
}

function convertEvents(path: string, ctx: ConvertContext): AsyncGenerator<ConversionItem> {
  return convertDocuments(path, ctx, (doc) => convertEventDocument(doc, path, ctx));
}

function* convertEventDocument(doc: unknown, path: string, ctx: ConvertContext): Generator<ConversionItem> {
  const events = eventList(doc);
  if (!events) {
    yield problem(ctx.file, '$', 'not an OpenHands event stream: expected an array of events');
    return;
  }
  const base = Array.isArray(doc) ? '$' : `$.${['history', 'events', 'trajectory'].find((k) => Array.isArray(rec(doc)[k])) ?? 'history'}`;
  const conv = new ConversationSteps();
  const agentStates: JsonObject[] = [];
  const otherEvents: JsonObject[] = [];
  const models = new Set<string>();
  let nullObservations = 0;
  const problems: ConversionItem[] = [];
  const stepOf = new Set<string>();

  events.forEach((event, i) => {
    const at = `${base}[${i}]`;
    if (!isRecord(event)) {
      problems.push(problem(ctx.file, at, 'expected an event object; skipped'));
      return;
    }
    const id = event.id !== undefined ? String(event.id) : `index-${i}`;
    const timestamp = toIsoTimestamp(event.timestamp);
    const source = str(event.source);
    const action = str(event.action);
    const observation = str(event.observation);
    const args = rec(event.args);

    if (action !== undefined) {
      if (action === 'message' && source !== 'agent') {
        conv.user(str(args.content) ?? str(event.message) ?? '');
        const images = arr(args.image_urls);
        if (images.length > 0) conv.note('userImages', images);
        return;
      }
      if (source !== 'agent') {
        otherEvents.push(compactEvent(event));
        return;
      }
      const tcm = isRecord(event.tool_call_metadata) ? event.tool_call_metadata : undefined;
      if (tcm) {
        const response = rec(tcm.model_response);
        const message = rec(rec(arr(response.choices)[0]).message);
        const model = str(response.model);
        if (model) models.add(model);
        const group = str(response.id) ?? `event-${id}`;
        conv.assistant(group, {
          startedAt: timestamp,
          metadata: { responseId: str(response.id), model, usage: response.usage },
        });
        const callId = str(tcm.tool_call_id);
        const call = arr(message.tool_calls).find((c) => isRecord(c) && c.id === callId);
        let tool = str(tcm.function_name) ?? action;
        let params: JsonObject;
        if (isRecord(call) && isRecord(call.function)) {
          tool = str(call.function.name) ?? tool;
          const parsed = parseToolArguments(call.function.arguments);
          if (parsed.warning) problems.push(problem(ctx.file, `${at}.tool_call_metadata.model_response`, parsed.warning, { severity: 'warning' }));
          params = parsed.params;
        } else {
          params = actionToCall(action, args).params;
        }
        const thought = str(args.thought);
        if (thought) conv.text(thought);
        else if (stepsInGroup(conv, group) === 0) {
          const text = str(message.content);
          if (text) conv.text(text);
        }
        conv.toolCall({
          id,
          tool,
          params,
          startedAt: timestamp,
          metadata: {
            toolCallId: callId,
            eventId: event.id,
            openhandsAction: action,
            message: str(event.message) || undefined,
            args: omitKeys(args, ['thought']),
            totalCallsInResponse: num(tcm.total_calls_in_response),
            eventFields: eventFields(event),
          },
        });
        stepOf.add(id);
        return;
      }
      if (action === 'message') {
        conv.assistant(`event-${id}`, { startedAt: timestamp, metadata: { eventId: event.id } });
        conv.text(str(args.content) ?? str(event.message) ?? '');
        conv.endAssistant();
        return;
      }
      if (action === 'change_agent_state' || action === 'system' || action === 'recall' || action === 'condensation') {
        otherEvents.push(compactEvent(event));
        return;
      }
      const mapped = actionToCall(action, args);
      conv.assistant(`event-${id}`, { startedAt: timestamp });
      const thought = str(args.thought);
      if (thought) conv.text(thought);
      conv.toolCall({
        id,
        tool: mapped.tool,
        params: mapped.params,
        startedAt: timestamp,
        metadata: { eventId: event.id, openhandsAction: action, message: str(event.message) || undefined, ...actionBookkeeping(args), eventFields: eventFields(event) },
      });
      stepOf.add(id);
      return;
    }

    if (observation !== undefined) {
      const extras = rec(event.extras);
      if (observation === 'agent_state_changed') {
        agentStates.push({ state: extras.agent_state, timestamp, eventId: event.id });
        return;
      }
      const cause = event.cause !== undefined && event.cause !== null ? String(event.cause) : undefined;
      if (observation === 'null') {
        nullObservations += 1;
        return;
      }
      if (cause !== undefined && stepOf.has(cause)) {
        const meta = rec(extras.metadata);
        conv.toolResult({
          id: cause,
          observation: str(event.content) ?? '',
          isError: observation === 'error',
          endedAt: timestamp,
          metadata: {
            observationType: observation,
            exitCode: num(meta.exit_code),
            observationMessage: str(event.message) || undefined,
            extras: Object.keys(extras).length > 0 ? extras : undefined,
            success: event.success,
          },
        });
        return;
      }
      otherEvents.push(compactEvent(event));
      return;
    }
    otherEvents.push(compactEvent(event));
  });
  yield* problems;

  const done = conv.finish(['finish']);
  const lastState = str(agentStates[agentStates.length - 1]?.state);
  const lastTool = done.steps[done.steps.length - 1]?.tool;
  const modelList = [...models];
  yield* assembleTrajectory(
    {
      task: {
        // An evaluation output (one run per line) names its instance; a downloaded event stream is named by its file.
        id: str(rec(doc).instance_id) || baseName(path, ['.json', '.jsonl']),
        domain: 'coding',
        instruction: str(rec(doc).instruction) ?? joinText(done.instruction) ?? '',
      },
      envId: ENV_ID,
      agent: { name: 'openhands', model: modelList[0] ?? ctx.options.model },
      steps: done.steps,
      outcome: openHandsOutcome(lastTool, lastState, done.openCalls),
      metadata: {
        successKnown: false,
        lastAgentState: lastState,
        agentStates: agentStates.length > 0 ? agentStates : undefined,
        models: modelList.length > 1 ? modelList : undefined,
        otherEvents: otherEvents.length > 0 ? otherEvents : undefined,
        nullObservations: nullObservations > 0 ? nullObservations : undefined,
        unmatchedObservations: conv.unmatchedResults.length > 0 ? conv.unmatchedResults : undefined,
        trailingThought: done.trailingThought,
        preStepNotes: Object.keys(conv.preStepNotes).length > 0 ? conv.preStepNotes : undefined,
        ...(Array.isArray(doc) ? {} : omitKeys(rec(doc), ['history', 'events', 'trajectory'])),
      },
    },
    { format: openHandsEventsAdapter.name, file: ctx.file },
  );
}

/** How many steps a response group has produced so far. */
function stepsInGroup(conv: ConversationSteps, group: string): number {
  return conv.steps.filter((s) => s.group === group).length;
}

/** An action event's fields that have no place of their own (`timeout`, …); undefined when none. */
function eventFields(event: JsonObject): JsonObject | undefined {
  const rest = omitKeys(event, ['id', 'timestamp', 'source', 'message', 'action', 'args', 'tool_call_metadata']);
  return Object.keys(rest).length > 0 ? rest : undefined;
}

/** An event without its bulky model response, for `metadata.otherEvents`. */
function compactEvent(event: JsonObject): JsonObject {
  return omitKeys(event, ['tool_call_metadata']);
}

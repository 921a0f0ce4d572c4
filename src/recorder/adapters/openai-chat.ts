import type { Outcome } from '../../core/trajectory.js';
import type { ConversionItem, ConvertContext, LogAdapter, LogSample } from '../adapter.js';
import { problem } from '../adapter.js';
import { assembleTrajectory } from '../assemble.js';
import type { Interaction } from '../cassette.js';
import { convertCassetteFile, looksLikeCassette } from '../cassette.js';
import { ConversationSteps } from '../conversation.js';
import { feedOpenAiMessages } from '../openai-messages.js';
import { terminated, truncated, unfinished } from '../outcome.js';
import type { JsonObject } from '../values.js';
import { arr, isRecord, joinText, omitKeys, rec, str, toIsoTimestamp } from '../values.js';

/** The `envId` of trajectories converted from this format. */
const ENV_ID = 'external/openai-chat-v0';

/**
 * OpenAI chat-completions traffic recorded as a VCR cassette (YAML; one file per test or run, read
 * whole). One trajectory per conversation in the cassette.
 *
 * - **Conversation** = the last request's `messages` plus the last response's message; assistant
 *   `tool_calls` are steps (tool = function name, params = parsed arguments), `role: tool` messages are
 *   their observations (by `tool_call_id`), a final text answer is a `respond` step. Several calls in one
 *   response are a parallel group.
 * - **Per step**: the response that produced it (`id`, `model`, `usage`, `finish_reason`, processing
 *   time header); `startedAt` = the response's `created` time.
 * - **Instruction** = the first user message; system messages → `metadata.systemPrompt`; `tools` →
 *   `task.metadata.tools`; other request parameters → `metadata.request`.
 * - **Outcome** from the last `finish_reason`: `stop` → terminated/`responded`, `length` →
 *   truncated/`max_tokens`, `content_filter` → truncated/`content_filter`, `tool_calls` → `incomplete`.
 *   A cassette has no verdict: success is false.
 * - The agent is unknown (a cassette records API traffic): `agent.name` is `openai-chat`.
 */
export const openAiChatAdapter: LogAdapter = {
  name: 'openai-chat',
  description: 'OpenAI chat-completions traffic in a VCR cassette (YAML)',
  envId: ENV_ID,
  detect: (sample: LogSample) => (looksLikeCassette(sample.head, sample.firstRecord, /api\.openai\.com|\/chat\/completions/) ? 0.9 : 0),
  convert: convertOpenAiCassette,
};

function convertOpenAiCassette(path: string, ctx: ConvertContext): AsyncGenerator<ConversionItem> {
  return convertCassetteFile(path, ctx, 'chat-completions', convertConversation);
}

function* convertConversation(conversation: readonly Interaction[], taskId: string, ctx: ConvertContext): Generator<ConversionItem> {
  const last = conversation[conversation.length - 1] as Interaction;
  const lastChoice = rec(arr(last.response.choices)[0]);
  const messages: unknown[] = [...arr(last.request.messages)];
  if (isRecord(lastChoice.message)) messages.push(lastChoice.message);
  // The assistant message at position k came from the interaction whose request had k messages.
  const byLength = new Map<number, Interaction>();
  for (const it of conversation) byLength.set(arr(it.request.messages).length, it);
  const conv = new ConversationSteps();
  const fed = feedOpenAiMessages(conv, messages, {
    path: '$.messages',
    assistantInfo: (_message, index) => {
      const it = byLength.get(index);
      if (!it) return {};
      const choice = rec(arr(it.response.choices)[0]);
      return {
        startedAt: toIsoTimestamp(it.response.created) ?? it.responseDate,
        metadata: {
          interaction: it.index,
          responseId: str(it.response.id),
          model: str(it.response.model),
          usage: it.response.usage,
          finishReason: str(choice.finish_reason),
          systemFingerprint: str(it.response.system_fingerprint),
          responseHeaders: Object.keys(it.responseHeaders).length > 0 ? it.responseHeaders : undefined,
          status: it.status,
        },
      };
    },
  });
  for (const p of fed.problems) yield problem(ctx.file, p.path, p.message, { severity: p.severity });
  const done = conv.finish();
  const first = conversation[0] as Interaction;
  const tools = first.request.tools;
  yield* assembleTrajectory(
    {
      task: {
        id: taskId,
        domain: arr(tools).length > 0 ? 'tool-use' : 'conversation',
        instruction: joinText(done.instruction) ?? '',
        metadata: { tools },
      },
      envId: ENV_ID,
      agent: { name: 'openai-chat', model: str(last.response.model) ?? str(first.request.model) ?? ctx.options.model },
      steps: done.steps,
      outcome: openAiOutcome(str(lastChoice.finish_reason)),
      metadata: {
        successKnown: false,
        systemPrompt: fed.systemPrompts.length > 0 ? fed.systemPrompts.join('\n\n') : undefined,
        request: omitKeys(first.request, ['messages', 'tools']),
        uri: first.uri,
        interactions: conversation.map((it) => it.index),
        unmatchedToolResults: conv.unmatchedResults.length > 0 ? conv.unmatchedResults : undefined,
        trailingThought: done.trailingThought,
      } satisfies JsonObject,
    },
    { format: openAiChatAdapter.name, file: ctx.file },
  );
}

/** Outcome from the last `finish_reason` (see {@link openAiChatAdapter}). */
export function openAiOutcome(finishReason: string | undefined): Outcome {
  switch (finishReason) {
    case 'stop':
      return terminated('responded');
    case 'length':
      return truncated('max_tokens');
    case 'content_filter':
      return truncated('content_filter');
    case 'tool_calls':
    case 'function_call':
      return unfinished('incomplete');
    default:
      return unfinished('unknown');
  }
}

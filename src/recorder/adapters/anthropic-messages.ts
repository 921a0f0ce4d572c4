import type { Outcome } from '../../core/trajectory.js';
import type { ConversionItem, ConvertContext, LogAdapter, LogSample } from '../adapter.js';
import { problem } from '../adapter.js';
import { feedAnthropicAssistantBlocks, feedAnthropicUserContent } from '../anthropic-content.js';
import { assembleTrajectory } from '../assemble.js';
import type { Interaction } from '../cassette.js';
import { convertCassetteFile, looksLikeCassette } from '../cassette.js';
import { ConversationSteps } from '../conversation.js';
import type { PathProblem } from '../openai-messages.js';
import { terminated, truncated, unfinished } from '../outcome.js';
import type { JsonObject } from '../values.js';
import { arr, contentText, isRecord, joinText, omitKeys, str } from '../values.js';

/** The `envId` of trajectories converted from this format. */
const ENV_ID = 'external/anthropic-messages-v0';

/**
 * Anthropic Messages API traffic recorded as a VCR cassette (YAML; one file per test or run, read
 * whole). One trajectory per conversation in the cassette.
 *
 * - **Conversation** = the last request's `messages` plus the last response. Assistant `tool_use`
 *   blocks are steps (tool = `name`, params = `input`); the text and thinking before them are the
 *   thought; `tool_result` blocks in the next user message are the observations (`is_error` → step
 *   error); a final text-only response is a `respond` step. Several `tool_use` blocks in one response
 *   are a parallel group (`metadata.parallelGroup`).
 * - **Per step**: the response that produced it (`id`, `model`, `usage`, `stop_reason`). No timestamps
 *   are recorded (unless a `date` header is), so times are synthetic.
 * - **Instruction** = the first user message; `system` → `metadata.systemPrompt`; `tools` →
 *   `task.metadata.tools`; other request parameters → `metadata.request`.
 * - **Outcome** from the last `stop_reason`: `end_turn`/`stop_sequence` → terminated/`responded`,
 *   `max_tokens` → truncated/`max_tokens`, `refusal` → terminated/`refused`, `tool_use`/`pause_turn`
 *   → `incomplete`. A cassette has no verdict: success is false.
 * - The agent is unknown (a cassette records API traffic): `agent.name` is `anthropic-messages`.
 */
export const anthropicMessagesAdapter: LogAdapter = {
  name: 'anthropic-messages',
  description: 'Anthropic Messages API traffic in a VCR cassette (YAML)',
  envId: ENV_ID,
  detect: (sample: LogSample) => (looksLikeCassette(sample.head, sample.firstRecord, /api\.anthropic\.com|\/v1\/messages/) ? 0.9 : 0),
  convert: convertAnthropicCassette,
};

function convertAnthropicCassette(path: string, ctx: ConvertContext): AsyncGenerator<ConversionItem> {
  return convertCassetteFile(path, ctx, 'Messages API', convertConversation);
}

function* convertConversation(conversation: readonly Interaction[], taskId: string, ctx: ConvertContext): Generator<ConversionItem> {
  const last = conversation[conversation.length - 1] as Interaction;
  const messages: unknown[] = [...arr(last.request.messages)];
  messages.push({ role: 'assistant', content: last.response.content });
  const byLength = new Map<number, Interaction>();
  for (const it of conversation) byLength.set(arr(it.request.messages).length, it);

  const conv = new ConversationSteps();
  const local: PathProblem[] = [];
  messages.forEach((m, index) => {
    const at = `$.messages[${index}]`;
    if (!isRecord(m)) {
      local.push({ path: at, message: 'expected a message object; skipped', severity: 'error' });
      return;
    }
    if (m.role === 'assistant') {
      const it = byLength.get(index);
      conv.assistant(str(it?.response.id) ?? at, {
        startedAt: it?.responseDate,
        metadata: it
          ? {
              interaction: it.index,
              responseId: str(it.response.id),
              model: str(it.response.model),
              usage: it.response.usage,
              stopReason: str(it.response.stop_reason),
              responseHeaders: Object.keys(it.responseHeaders).length > 0 ? it.responseHeaders : undefined,
              status: it.status,
            }
          : {},
      });
      feedAnthropicAssistantBlocks(conv, m.content, `${at}.content`, local);
      conv.endAssistant();
    } else if (m.role === 'user') {
      feedAnthropicUserContent(conv, m.content, `${at}.content`, local);
    } else {
      local.push({ path: `${at}.role`, message: `unknown role ${JSON.stringify(m.role)}; message kept in metadata.otherMessages`, severity: 'warning' });
      conv.note('otherMessages', m);
    }
  });
  for (const p of local) yield problem(ctx.file, p.path, p.message, { severity: p.severity });
  const done = conv.finish();
  const first = conversation[0] as Interaction;
  const system = first.request.system;
  yield* assembleTrajectory(
    {
      task: {
        id: taskId,
        domain: arr(first.request.tools).length > 0 ? 'tool-use' : 'conversation',
        instruction: joinText(done.instruction) ?? '',
        metadata: { tools: first.request.tools },
      },
      envId: ENV_ID,
      agent: { name: 'anthropic-messages', model: str(last.response.model) ?? str(first.request.model) ?? ctx.options.model },
      steps: done.steps,
      outcome: anthropicOutcome(str(last.response.stop_reason)),
      metadata: {
        successKnown: false,
        systemPrompt: typeof system === 'string' ? system : system !== undefined ? contentText(system) : undefined,
        request: omitKeys(first.request, ['messages', 'tools', 'system']),
        uri: first.uri,
        interactions: conversation.map((it) => it.index),
        unmatchedToolResults: conv.unmatchedResults.length > 0 ? conv.unmatchedResults : undefined,
        trailingThought: done.trailingThought,
      } satisfies JsonObject,
    },
    { format: anthropicMessagesAdapter.name, file: ctx.file },
  );
}

/** Outcome from the last `stop_reason` (see {@link anthropicMessagesAdapter}). */
export function anthropicOutcome(stopReason: string | undefined): Outcome {
  switch (stopReason) {
    case 'end_turn':
    case 'stop_sequence':
      return terminated('responded');
    case 'max_tokens':
      return truncated('max_tokens');
    case 'refusal':
      return terminated('refused');
    case 'tool_use':
    case 'pause_turn':
      return unfinished('incomplete');
    default:
      return unfinished('unknown');
  }
}

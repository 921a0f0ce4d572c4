import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { contentRef } from '../../core/canonical.js';
import { SchemaError } from '../../core/errors.js';
import type { Outcome } from '../../core/trajectory.js';
import { formatZodIssues } from '../../core/trajectory.js';
import type { ConversionItem, ConvertContext, LogAdapter, LogSample } from '../adapter.js';
import { problem } from '../adapter.js';
import type { StepDraft } from '../assemble.js';
import { assembleTrajectory, RESPOND_TOOL } from '../assemble.js';
import { ConversationSteps } from '../conversation.js';
import { streamJsonl } from '../../core/jsonl-file.js';
import { jsonlProblem } from '../jsonl.js';
import { feedOpenAiMessages } from '../openai-messages.js';
import { clampScore, terminated, truncated, unfinished } from '../outcome.js';
import type { JsonObject } from '../values.js';
import { contentText, isRecord, num, omitKeys, rec, str } from '../values.js';

/** The `envId` of trajectories converted from this format. */
const ENV_ID = 'external/verifiers-v0';

/**
 * `verifiers` evaluation results (`outputs/evals/<env>--<model>/<run>/results.jsonl`): one rollout per
 * line, streamed (one trajectory per line; a malformed line is reported with its number and JSON path
 * and skipped).
 *
 * - **Instruction** = the last user message of `prompt`; system messages → `metadata.systemPrompt`;
 *   a longer prompt (few-shot, multi-turn) is kept whole in `task.metadata.prompt`.
 * - **Steps** from `completion` (OpenAI messages; `tool_calls[]` elements are JSON-encoded strings and
 *   tool messages carry no `tool_call_id`, so results pair with calls by order). The final assistant
 *   answer is a `respond` step. A string completion is a single `respond` step.
 * - **Task id** = `prompt:<16 hex of sha256(prompt)>`: the line's `id` is not a reliable example id
 *   (in the fixtures one id covers different prompts), and GRPO-style grouping needs the prompt.
 *   `answer` is a reference answer, so it goes to `metadata.referenceAnswer`, not into the task.
 * - **Outcome**: `reward` → `score` (clamped to [0, 1]; raw value in `metadata.reward`), success =
 *   `reward >= 1`; ending with a reply → terminated/`responded`, ending on a tool call or result (turn
 *   limit) → truncated/`step_limit`; `is_truncated`/`stop_condition` when the file has them.
 * - **Model** from a sibling `metadata.json` (`model`, `env`) when present, else `--model`.
 * - **Metadata**: every other field (per-function rewards such as `correct_answer_reward_func`, timing
 *   `generation_ms`…, counters), and `info` (tool schemas go to `task.metadata.tools`).
 */
export const verifiersAdapter: LogAdapter = {
  name: 'verifiers',
  description: 'verifiers evaluation results.jsonl (OpenAI-format rollouts with rewards)',
  envId: ENV_ID,
  detect: detectVerifiers,
  convert: convertVerifiers,
};

const RolloutSchema = z.looseObject({
  prompt: z.union([z.array(z.unknown()), z.string()]),
  completion: z.union([z.array(z.unknown()), z.string()]),
  reward: z.number().nullable().optional(),
});
type Rollout = z.infer<typeof RolloutSchema>;

function parseRollout(value: unknown, place: string): Rollout {
  const result = RolloutSchema.safeParse(value);
  if (!result.success) {
    const issues = formatZodIssues(result.error, place);
    throw new SchemaError(issues.join('\n'), issues);
  }
  return result.data;
}

function detectVerifiers(sample: LogSample): number {
  const first = sample.firstRecord;
  if (isRecord(first)) {
    if (!('prompt' in first) || !('completion' in first)) return 0;
    return 'reward' in first || 'answer' in first ? 0.95 : 0.7;
  }
  if (first !== undefined) return 0;
  return /^\s*\{/.test(sample.head) && /"prompt"\s*:/.test(sample.head) && /"completion"\s*:/.test(sample.head) ? 0.6 : 0;
}

async function* convertVerifiers(path: string, ctx: ConvertContext): AsyncGenerator<ConversionItem> {
  const run = await readRunMetadata(path);
  for await (const record of streamJsonl(path, ctx.file, parseRollout)) {
    if (!record.ok) {
      for (const message of record.errors) yield jsonlProblem(ctx.file, record.line, message);
      continue;
    }
    yield* convertRollout(record.value, record.line, ctx, run);
  }
}

function* convertRollout(rollout: Rollout, line: number, ctx: ConvertContext, run: JsonObject): Generator<ConversionItem> {
  const prompt = typeof rollout.prompt === 'string' ? [{ role: 'user', content: rollout.prompt }] : rollout.prompt;
  const systemPrompts: string[] = [];
  let instruction = '';
  for (const m of prompt) {
    if (!isRecord(m)) continue;
    if (m.role === 'system' || m.role === 'developer') systemPrompts.push(contentText(m.content));
    if (m.role === 'user') instruction = contentText(m.content);
  }
  const conv = new ConversationSteps();
  conv.user(instruction);
  const problems: ConversionItem[] = [];
  if (typeof rollout.completion === 'string') {
    conv.assistant('completion');
    conv.text(rollout.completion);
    conv.endAssistant();
  } else {
    const fed = feedOpenAiMessages(conv, rollout.completion, { path: '$.completion' });
    for (const p of fed.problems) problems.push(problem(ctx.file, p.path, p.message, { line, severity: p.severity }));
  }
  yield* problems;
  const done = conv.finish();
  const reward = num(rollout.reward);
  const info = rec(rollout.info);
  const taskName = str(rollout.task);
  const hex = contentRef(rollout.prompt).slice('sha256:'.length, 'sha256:'.length + 16);
  const known = ['prompt', 'completion', 'info', 'task', 'answer', 'reward', 'id', 'is_truncated', 'stop_condition'];
  yield* assembleTrajectory(
    {
      task: {
        id: `prompt:${hex}`,
        domain: taskName && taskName !== 'default' ? taskName : 'generic',
        instruction,
        metadata: {
          tools: info.oai_tools,
          prompt: prompt.length > systemPrompts.length + 1 ? prompt : undefined,
          verifiersTask: taskName,
          env: str(run.env) ?? str(run.env_id),
        },
      },
      envId: ENV_ID,
      agent: { name: 'verifiers', model: str(run.model) ?? ctx.options.model },
      steps: done.steps,
      outcome: verifiersOutcome(rollout, done.steps, reward),
      metadata: {
        exampleId: rollout.id,
        reward: rollout.reward,
        successKnown: reward !== undefined,
        referenceAnswer: rollout.answer,
        systemPrompt: systemPrompts.length > 0 ? systemPrompts.join('\n\n') : undefined,
        info: Object.keys(info).length > 0 ? omitKeys(info, ['oai_tools']) : undefined,
        fields: omitKeys(rollout, known),
        unmatchedToolResults: conv.unmatchedResults.length > 0 ? conv.unmatchedResults : undefined,
        trailingThought: done.trailingThought,
      },
    },
    { format: verifiersAdapter.name, file: ctx.file, line },
  );
}

/** Outcome of a rollout; see {@link verifiersAdapter}. */
export function verifiersOutcome(rollout: JsonObject, steps: readonly StepDraft[], reward: number | undefined): Outcome {
  const verdict = reward !== undefined ? { success: reward >= 1, score: clampScore(reward) } : {};
  if (rollout.is_truncated === true) return truncated(str(rollout.stop_condition) ?? 'step_limit', verdict);
  const last = steps[steps.length - 1];
  if (!last) return unfinished('unknown', verdict);
  if (last.tool === RESPOND_TOOL) return terminated('responded', verdict);
  return truncated('step_limit', verdict);
}

/** The run's `metadata.json` next to `results.jsonl`, when there is one. */
async function readRunMetadata(path: string): Promise<JsonObject> {
  try {
    const value = JSON.parse(await readFile(join(dirname(path), 'metadata.json'), 'utf8')) as unknown;
    return rec(value);
  } catch {
    return {};
  }
}

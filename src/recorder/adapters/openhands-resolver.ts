import type { ConversionItem, ConvertContext, LogAdapter, LogSample } from '../adapter.js';
import { problem } from '../adapter.js';
import { assembleTrajectory } from '../assemble.js';
import { ConversationSteps } from '../conversation.js';
import { defined } from '../../core/defined.js';
import { anyJson, streamJsonl } from '../../core/jsonl-file.js';
import { jsonlProblem } from '../jsonl.js';
import { actionBookkeeping, actionToCall, openHandsOutcome } from '../openhands-actions.js';
import type { JsonObject } from '../values.js';
import { isRecord, joinText, num, omitKeys, rec, str, toIsoTimestamp } from '../values.js';

/** The `envId` of trajectories converted from this format. */
const ENV_ID = 'external/openhands-resolver-v0';

/**
 * OpenHands resolver output (`output.jsonl`): one whole run per line, streamed line by line (one
 * trajectory per line; a malformed line is reported with its number and skipped).
 *
 * - **Steps** from `history[]`, whose events are flattened (no ids, no `source`, each observation right
 *   after its action): actions map by type (`run` → `execute_bash {command}`, `run_ipython` →
 *   `execute_ipython_cell {code}`, `finish` → `finish`; see `openhands-actions.ts`), thought =
 *   `thought`; an observation answers the oldest open action; `exit_code` goes to metadata. A `message`
 *   with `wait_for_response: true` (or `source: agent`) is the agent's `respond`; other messages are the
 *   user's.
 * - **Task**: id `owner/repo#number` from `issue`, instruction = `instruction` (else the first user
 *   message).
 * - **Outcome**: the line's `success` is the verdict (score 1/0) — note it is the resolver's own
 *   LLM-judged guess (`result_explanation`), not a test run; `finish` → terminated/`finished`, an
 *   `error` → truncated/`error`.
 * - **Metadata**: `issue`, `git_patch`, `metrics` (costs), `result_explanation`, `error`, everything
 *   else on the line except `history`.
 */
export const openHandsResolverAdapter: LogAdapter = {
  name: 'openhands-resolver',
  description: 'OpenHands resolver output.jsonl (one issue-resolution run per line)',
  envId: ENV_ID,
  detect: detectResolver,
  convert: convertResolver,
};

function detectResolver(sample: LogSample): number {
  const rec0 = sample.firstRecord;
  if (isRecord(rec0)) {
    if (!Array.isArray(rec0.history)) return 0;
    const issueLike = isRecord(rec0.issue) || 'git_patch' in rec0 || 'result_explanation' in rec0;
    return issueLike ? 0.95 : 0;
  }
  if (rec0 !== undefined) return 0;
  return /^\s*\{"issue"\s*:/.test(sample.head) && /"history"\s*:\s*\[/.test(sample.head) ? 0.7 : 0;
}

async function* convertResolver(path: string, ctx: ConvertContext): AsyncGenerator<ConversionItem> {
  for await (const record of streamJsonl(path, ctx.file, anyJson)) {
    if (!record.ok) {
      for (const message of record.errors) yield jsonlProblem(ctx.file, record.line, message);
      continue;
    }
    yield* convertRun(record.value, record.line, ctx);
  }
}

function* convertRun(value: unknown, line: number, ctx: ConvertContext): Generator<ConversionItem> {
  const place = { line };
  if (!isRecord(value)) {
    yield problem(ctx.file, '$', 'expected a resolver run object; line skipped', place);
    return;
  }
  if (!Array.isArray(value.history)) {
    yield problem(ctx.file, '$.history', `expected an array, got ${JSON.stringify(value.history)?.slice(0, 40)}; line skipped`, place);
    return;
  }
  const conv = new ConversationSteps();
  const other: JsonObject[] = [];
  value.history.forEach((event, i) => {
    const at = `$.history[${i}]`;
    if (!isRecord(event)) {
      other.push({ index: i, event });
      return;
    }
    const timestamp = toIsoTimestamp(event.timestamp);
    const action = str(event.action);
    const observation = str(event.observation);
    if (action !== undefined) {
      const content = str(event.content) ?? str(rec(event.args).content) ?? '';
      const fromAgent = event.source === 'agent' || (event.source === undefined && event.wait_for_response === true);
      if (action === 'message' && !fromAgent) {
        conv.user(content);
        return;
      }
      if (action === 'message') {
        conv.assistant(at, { startedAt: timestamp });
        conv.text(content);
        conv.endAssistant();
        return;
      }
      const args = isRecord(event.args) ? event.args : omitKeys(event, ['action', 'source', 'id', 'timestamp', 'message']);
      const mapped = actionToCall(action, args);
      conv.assistant(at, { startedAt: timestamp });
      const thought = str(args.thought);
      if (thought) conv.text(thought);
      conv.toolCall({
        tool: mapped.tool,
        params: mapped.params,
        startedAt: timestamp,
        metadata: { openhandsAction: action, ...actionBookkeeping(args) },
      });
      return;
    }
    if (observation !== undefined) {
      const matched = conv.toolResult({
        observation: str(event.content) ?? '',
        isError: observation === 'error',
        endedAt: timestamp,
        metadata: { observationType: observation, exitCode: num(event.exit_code), ...omitKeys(event, ['observation', 'content', 'exit_code', 'command', 'code']) },
      });
      if (!matched) other.push({ index: i, event });
      return;
    }
    other.push({ index: i, event });
  });
  const done = conv.finish(['finish']);
  const issue = rec(value.issue);
  const owner = str(issue.owner);
  const repo = str(issue.repo);
  const number = num(issue.number);
  const taskId = owner && repo && number !== undefined ? `${owner}/${repo}#${number}` : `${ctx.file}:${line}`;
  const success = typeof value.success === 'boolean' ? value.success : undefined;
  const error = value.error;
  const lastTool = done.steps[done.steps.length - 1]?.tool;
  const verdict = defined({ success });
  const outcome =
    error !== null && error !== undefined && error !== '' && lastTool !== 'finish'
      ? { success: success ?? false, score: success ? 1 : 0, terminated: false, truncated: true, reason: 'error' }
      : openHandsOutcome(lastTool, undefined, done.openCalls, verdict);
  yield* assembleTrajectory(
    {
      task: {
        id: taskId,
        domain: 'coding',
        instruction: str(value.instruction) ?? joinText(done.instruction) ?? '',
        metadata: { issue: Object.keys(issue).length > 0 ? issue : undefined, issueType: value.issue_type, baseCommit: value.base_commit },
      },
      envId: ENV_ID,
      agent: { name: 'openhands', model: ctx.options.model },
      steps: done.steps,
      outcome,
      metadata: {
        successKnown: success !== undefined,
        successSource: success !== undefined ? 'resolver success flag (LLM-judged, see resultExplanation)' : undefined,
        resultExplanation: value.result_explanation,
        gitPatch: value.git_patch,
        metrics: value.metrics,
        error,
        unmatchedEvents: other.length > 0 ? other : undefined,
        trailingThought: done.trailingThought,
        ...omitKeys(value, ['history', 'issue', 'issue_type', 'base_commit', 'instruction', 'success', 'result_explanation', 'git_patch', 'metrics', 'error']),
      },
    },
    { format: openHandsResolverAdapter.name, file: ctx.file, line },
  );
}

import type { Outcome } from '../../core/trajectory.js';
import type { ConversionItem, ConvertContext, LogAdapter, LogSample } from '../adapter.js';
import { problem } from '../adapter.js';
import { feedAnthropicAssistantBlocks, feedAnthropicUserContent } from '../anthropic-content.js';
import type { StepDraft } from '../assemble.js';
import { assembleTrajectory, finalizeSteps, RESPOND_TOOL } from '../assemble.js';
import { ConversationSteps } from '../conversation.js';
import { anyJson, streamJsonl } from '../../core/jsonl-file.js';
import { jsonlProblem } from '../jsonl.js';
import type { PathProblem } from '../openai-messages.js';
import { terminated, truncated, unfinished } from '../outcome.js';
import type { JsonObject } from '../values.js';
import { contentText, isRecord, joinText, omitKeys, rec, str, toIsoTimestamp } from '../values.js';
import { defined } from '../../core/defined.js';

/** The `envId` of trajectories converted from this format. */
const ENV_ID = 'external/claude-code-v0';

/**
 * Claude Code session transcripts (`~/.claude/projects/<project>/<session>.jsonl`, and subagent files
 * `subagents/agent-<id>.jsonl`). Streamed line by line; one trajectory per session (per `sessionId`, and
 * per subagent for sidechain entries). Only conversation entries (`user`, `assistant`, `system`) are
 * kept until the session is assembled at the end of the file; `progress`, `file-history-snapshot` and
 * `queue-operation` lines are only counted (`metadata.entryCounts`): they are UI and undo bookkeeping.
 *
 * - **Which entries**: entries form a tree through `parentUuid` (`logicalParentUuid` across a
 *   compaction). A rewind starts a sibling branch. The trajectory follows the **main chain**: the
 *   ancestry of the last `user`/`assistant` entry in the file (plus the hook and system entries that
 *   hang below it). Every other branch is converted the same
 *   way and kept in `metadata.abandonedBranches` (fork point, its steps, the user messages that started
 *   it).
 * - **Steps**: the blocks of one API response (one `message.id`) arrive one per line, with tool results
 *   between them; a `tool_use` block is a step (tool = `name`, params = `input`), its thought is the
 *   `thinking`/`text` blocks before it; its observation is the matching `tool_result` (`is_error` → step
 *   error), with `toolUseResult` in metadata. A response with text and no tool call is a `respond` step
 *   whose observation is the user's next prompt. Several `tool_use` blocks in one response are a
 *   parallel group. Usage, model, request id and stop reason go to the metadata of the response's
 *   first step. `<synthetic>` assistant messages (API errors) are notes, not steps.
 * - **Instruction**: the user's prompt(s) before the first response (`<bash-input>` and similar local
 *   command echoes included, as the model sees them); `isMeta` caveats go to `metadata.metaMessages`.
 * - **Outcome**: nothing in the log says whether the work was right: success is false. Ending with a
 *   reply → terminated/`responded`; `max_tokens` → truncated; a call left without result, or a tool
 *   result with no reply after it → `incomplete`.
 * - **Metadata**: session and agent ids, Claude Code versions, `summary` lines, hook and other `system`
 *   entries (on the step they follow), thinking signatures, attachments.
 */
export const claudeCodeAdapter: LogAdapter = {
  name: 'claude-code',
  description: 'Claude Code session transcript (JSONL; main sessions and subagent sidechains)',
  envId: ENV_ID,
  detect: detectClaudeCode,
  convert: convertClaudeCode,
};

const ENTRY_TYPES = new Set(['user', 'assistant', 'system', 'summary', 'progress', 'queue-operation', 'file-history-snapshot', 'attachment']);
const KEPT_TYPES = new Set(['user', 'assistant', 'system']);

function detectClaudeCode(sample: LogSample): number {
  const first = sample.firstRecord;
  if (isRecord(first)) {
    const type = str(first.type);
    if (!type || !ENTRY_TYPES.has(type)) return 0;
    if (typeof first.sessionId === 'string' || typeof first.leafUuid === 'string' || 'parentUuid' in first) return 0.95;
    if (type === 'file-history-snapshot' && 'snapshot' in first) return 0.9;
    return 0.3;
  }
  if (first !== undefined) return 0;
  return /"sessionId"\s*:/.test(sample.head) && /"parentUuid"\s*:/.test(sample.head) ? 0.8 : 0;
}

interface EntryNode {
  uuid: string;
  parent: string | undefined;
  type: string;
  line: number;
  order: number;
  /** The whole entry, for conversation entries only. */
  entry: JsonObject | undefined;
}

interface Session {
  key: string;
  sessionId: string;
  agentId: string | undefined;
  sidechain: boolean;
  nodes: Map<string, EntryNode>;
  ordered: EntryNode[];
  counts: Record<string, number>;
  firstLine: number;
  versions: Set<string>;
  cwd: string | undefined;
  gitBranch: string | undefined;
  duplicates: number;
}

async function* convertClaudeCode(path: string, ctx: ConvertContext): AsyncGenerator<ConversionItem> {
  const sessions = new Map<string, Session>();
  const summaries: JsonObject[] = [];
  const fileCounts: Record<string, number> = {};
  let order = 0;
  for await (const record of streamJsonl(path, ctx.file, anyJson)) {
    if (!record.ok) {
      for (const message of record.errors) yield jsonlProblem(ctx.file, record.line, message);
      continue;
    }
    const e = record.value;
    if (!isRecord(e)) {
      yield problem(ctx.file, '$', 'expected an entry object; line skipped', { line: record.line });
      continue;
    }
    const type = str(e.type);
    if (type === undefined) {
      yield problem(ctx.file, '$.type', 'entry has no type; line skipped', { line: record.line });
      continue;
    }
    if (type === 'summary') {
      summaries.push({ summary: e.summary, leafUuid: e.leafUuid });
      continue;
    }
    const sessionId = str(e.sessionId);
    if (sessionId === undefined) {
      fileCounts[type] = (fileCounts[type] ?? 0) + 1;
      continue;
    }
    const sidechain = e.isSidechain === true;
    const agentId = str(e.agentId);
    const key = sidechain ? `${sessionId}/agent-${agentId ?? 'sidechain'}` : sessionId;
    let session = sessions.get(key);
    if (!session) {
      session = {
        key, sessionId, agentId, sidechain, nodes: new Map(), ordered: [], counts: {}, firstLine: record.line,
        versions: new Set(), cwd: undefined, gitBranch: undefined, duplicates: 0,
      };
      sessions.set(key, session);
    }
    session.counts[type] = (session.counts[type] ?? 0) + 1;
    const version = str(e.version);
    if (version) session.versions.add(version);
    session.cwd ??= str(e.cwd);
    session.gitBranch ??= str(e.gitBranch);
    const uuid = str(e.uuid);
    if (uuid === undefined) continue;
    if (session.nodes.has(uuid)) {
      session.duplicates += 1;
      continue;
    }
    const node: EntryNode = {
      uuid,
      parent: str(e.parentUuid) ?? str(e.logicalParentUuid),
      type,
      line: record.line,
      order: (order += 1),
      entry: KEPT_TYPES.has(type) ? e : undefined,
    };
    session.nodes.set(uuid, node);
    session.ordered.push(node);
  }
  for (const session of sessions.values()) yield* convertSession(session, summaries, fileCounts, ctx);
}

function* convertSession(session: Session, summaries: JsonObject[], fileCounts: Record<string, number>, ctx: ConvertContext): Generator<ConversionItem> {
  const isConversation = (n: EntryNode): boolean => n.type === 'user' || n.type === 'assistant';
  const leaf = [...session.ordered].reverse().find(isConversation);
  if (!leaf) {
    yield problem(ctx.file, '$', `session ${session.key} has no user or assistant entries; nothing to convert`, { line: session.firstLine, severity: 'warning' });
    return;
  }
  // The main chain: the last conversation entry's ancestry.
  const chain: EntryNode[] = [];
  const onChain = new Set<string>();
  let chainBrokenAt: string | undefined;
  for (let n: EntryNode | undefined = leaf; n && !onChain.has(n.uuid); ) {
    chain.push(n);
    onChain.add(n.uuid);
    const parent: string | undefined = n.parent;
    if (parent === undefined) break;
    const next = session.nodes.get(parent);
    if (!next) chainBrokenAt = parent;
    n = next;
  }
  chain.reverse();
  // Entries after the last conversation entry (stop hooks, local-command echoes) hang below it.
  const lastChild = new Map<string, EntryNode>();
  for (const n of session.ordered) if (n.parent !== undefined) lastChild.set(n.parent, n);
  for (let n = lastChild.get(leaf.uuid); n && !onChain.has(n.uuid); n = lastChild.get(n.uuid)) {
    chain.push(n);
    onChain.add(n.uuid);
  }

  const problems: ConversionItem[] = [];
  const main = buildSteps(chain, ctx.file, problems);
  yield* problems;

  const abandonedBranches = collectBranches(session, onChain, isConversation, main.stepsAfter, ctx.file);
  const models = new Set<string>();
  for (const n of chain) {
    const model = str(rec(n.entry?.message).model);
    if (n.type === 'assistant' && model && model !== '<synthetic>') models.add(model);
  }
  const modelList = [...models];
  const sessionSummaries = summaries.filter((s) => typeof s.leafUuid === 'string' && session.nodes.has(s.leafUuid));
  const otherSummaries = summaries.filter((s) => !(typeof s.leafUuid === 'string' && session.nodes.has(s.leafUuid)));

  yield* assembleTrajectory(
    {
      task: {
        id: session.key,
        domain: 'coding',
        instruction: joinText(main.done.instruction) ?? '',
        metadata: { cwd: session.cwd, gitBranch: session.gitBranch },
      },
      envId: ENV_ID,
      agent: { name: 'claude-code', model: modelList[0] ?? ctx.options.model },
      steps: main.done.steps,
      outcome: claudeCodeOutcome(main.done.steps, main.done.openCalls, main.lastStopReason),
      metadata: {
        sessionId: session.sessionId,
        agentId: session.agentId,
        isSidechain: session.sidechain || undefined,
        successKnown: false,
        claudeCodeVersions: session.versions.size > 0 ? [...session.versions] : undefined,
        models: modelList.length > 1 ? modelList : undefined,
        mainChainEntries: chain.length,
        chainBrokenAt,
        abandonedBranches: abandonedBranches.length > 0 ? abandonedBranches : undefined,
        summaries: sessionSummaries.length > 0 ? sessionSummaries : undefined,
        fileSummaries: otherSummaries.length > 0 ? otherSummaries : undefined,
        metaMessages: main.metaMessages.length > 0 ? main.metaMessages : undefined,
        entryCounts: { ...session.counts, ...prefixKeys(fileCounts, 'file:') },
        duplicateEntries: session.duplicates > 0 ? session.duplicates : undefined,
        trailingThought: main.done.trailingThought,
        unmatchedToolResults: main.conv.unmatchedResults.length > 0 ? main.conv.unmatchedResults : undefined,
        preStepNotes: Object.keys(main.conv.preStepNotes).length > 0 ? main.conv.preStepNotes : undefined,
      },
    },
    { format: claudeCodeAdapter.name, file: ctx.file, line: session.firstLine },
  );
}

/** Steps of an ordered list of entries (the main chain or a branch path). */
function buildSteps(entries: readonly EntryNode[], file: string, problems: ConversionItem[]) {
  const conv = new ConversationSteps();
  const metaMessages: string[] = [];
  const stepsAfter = new Map<string, number>();
  let lastStopReason: string | undefined;
  for (const node of entries) {
    const e = node.entry;
    if (e) {
      const local: PathProblem[] = [];
      const timestamp = toIsoTimestamp(e.timestamp);
      const message = rec(e.message);
      if (node.type === 'user') {
        if (e.isMeta === true) metaMessages.push(contentText(message.content));
        else if (e.isCompactSummary === true) conv.note('compactSummaries', contentText(message.content));
        else {
          const toolUseResult = e.toolUseResult;
          feedAnthropicUserContent(conv, message.content, '$.message.content', local, {
            endedAt: timestamp,
            ...defined({ resultMetadata: toolUseResult !== undefined ? { toolUseResult } : undefined }),
          });
        }
      } else if (node.type === 'assistant') {
        const model = str(message.model);
        if (model === '<synthetic>') {
          conv.note('syntheticAssistantMessages', contentText(message.content));
        } else {
          const stopReason = str(message.stop_reason);
          if (stopReason) lastStopReason = stopReason;
          const meta: JsonObject = {};
          if (str(message.id)) meta.messageId = message.id;
          if (model) meta.model = model;
          if (str(e.requestId)) meta.requestId = e.requestId;
          if (isRecord(message.usage)) meta.usage = message.usage;
          if (stopReason) meta.stopReason = stopReason;
          conv.assistant(str(message.id) ?? node.uuid, { startedAt: timestamp, metadata: meta });
          feedAnthropicAssistantBlocks(conv, message.content, '$.message.content', local, { startedAt: timestamp, callMetadata: { entryUuid: node.uuid } });
        }
      } else {
        conv.note('systemMessages', omitKeys(e, ['uuid', 'parentUuid', 'sessionId', 'cwd', 'version', 'gitBranch', 'userType', 'isSidechain', 'slug', 'type']));
      }
      for (const p of local) problems.push(problem(file, p.path, p.message, { line: node.line, severity: p.severity }));
    }
    stepsAfter.set(node.uuid, conv.stepCount);
  }
  const done = conv.finish();
  return { conv, done, metaMessages, stepsAfter, lastStopReason };
}

/** Every branch off the main chain, converted, with where it forked. */
function collectBranches(
  session: Session,
  onChain: ReadonlySet<string>,
  isConversation: (n: EntryNode) => boolean,
  mainStepsAfter: ReadonlyMap<string, number>,
  file: string,
): JsonObject[] {
  const rootOf = new Map<string, string>();
  const findRoot = (node: EntryNode): string => {
    const path: EntryNode[] = [];
    let n: EntryNode | undefined = node;
    let root = node.uuid;
    while (n && !onChain.has(n.uuid)) {
      const known = rootOf.get(n.uuid);
      if (known) {
        root = known;
        break;
      }
      path.push(n);
      root = n.uuid;
      const parent: string | undefined = n.parent;
      n = parent !== undefined ? session.nodes.get(parent) : undefined;
      if (n && path.includes(n)) break;
    }
    for (const p of path) rootOf.set(p.uuid, root);
    return root;
  };
  const groups = new Map<string, EntryNode[]>();
  for (const node of session.ordered) {
    if (onChain.has(node.uuid) || !isConversation(node)) continue;
    const root = findRoot(node);
    const list = groups.get(root) ?? [];
    list.push(node);
    groups.set(root, list);
  }
  const branches: JsonObject[] = [];
  for (const [rootUuid, members] of groups) {
    const root = session.nodes.get(rootUuid);
    const last = members[members.length - 1];
    if (!root || !last) continue;
    const path: EntryNode[] = [];
    for (let n: EntryNode | undefined = last; n; ) {
      path.push(n);
      if (n.uuid === rootUuid) break;
      n = n.parent !== undefined ? session.nodes.get(n.parent) : undefined;
    }
    path.reverse();
    const sink: ConversionItem[] = [];
    const built = buildSteps(path, file, sink);
    const forkAfter = root.parent;
    branches.push({
      forkAfterUuid: forkAfter ?? null,
      forkAfterStep: forkAfter !== undefined ? (mainStepsAfter.get(forkAfter) ?? null) : 0,
      rootUuid,
      leafUuid: last.uuid,
      entries: members.length,
      firstLine: root.line,
      userMessages: built.done.instruction,
      steps: finalizeSteps(built.done.steps).steps,
      problems: sink.length > 0 ? sink : undefined,
    });
  }
  return branches;
}

/**
 * Outcome of a Claude Code session: a final reply → terminated/`responded`; a final `max_tokens` stop →
 * truncated/`max_tokens`; a call without result or a last step that is a tool call → `incomplete`;
 * no steps → `unknown`.
 */
export function claudeCodeOutcome(steps: readonly StepDraft[], openCalls: number, lastStopReason: string | undefined): Outcome {
  if (lastStopReason === 'max_tokens') return truncated('max_tokens');
  const last = steps[steps.length - 1];
  if (!last) return unfinished('unknown');
  if (openCalls === 0 && last.tool === RESPOND_TOOL) return terminated('responded');
  return unfinished('incomplete');
}

function prefixKeys(obj: Record<string, number>, prefix: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(obj)) out[`${prefix}${k}`] = v;
  return out;
}

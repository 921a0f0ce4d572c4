import type { StepDraft } from './assemble.js';
import { RESPOND_TOOL } from './assemble.js';
import type { JsonObject } from './values.js';
import { elapsedMs, firstLine, joinText } from './values.js';

/**
 * Turns a chat-shaped conversation (assistant messages with text, thinking and tool calls; tool results;
 * user messages) into step drafts. Every chat-like adapter (OpenAI messages, Anthropic messages, Claude
 * Code entries, OpenHands events) feeds its log into one of these, so the mapping rules live in one
 * place:
 *
 * - a tool call is a step; its thought is the text and thinking the assistant produced before it (since
 *   the previous step), in order;
 * - an assistant message with text but no tool call is a `respond` step (`params.content` = the text,
 *   thought = its thinking); the user's next message is its observation;
 * - a tool result is matched to its call by id, or, when the log has no ids, to the oldest open call;
 * - user messages before the agent acts are the instruction; user messages after a tool step (not a
 *   reply) go to that step's `metadata.userMessages`.
 *
 * Messages may interleave: Claude Code writes the blocks of one response on separate lines with tool
 * results between them, so a message stays open until another message or a user message starts.
 */
export class ConversationSteps {
  /** The steps so far. */
  readonly steps: StepDraft[] = [];
  /** User texts seen before the agent's first action. */
  readonly instruction: string[] = [];
  /** Tool results that matched no open call. */
  readonly unmatchedResults: JsonObject[] = [];
  /** Notes made before the first step (see {@link note}). */
  readonly preStepNotes: Record<string, unknown[]> = {};

  private readonly open: { id: string | undefined; step: StepDraft }[] = [];
  private message: OpenMessage | undefined;
  private carried: string[] = [];
  private replyTarget: StepDraft | undefined;
  private agentActed = false;
  private autoIds = 0;

  /**
   * Starts (or continues, for the same id) an assistant message. `metadata` (model, usage, ids) goes to
   * the first step the message produces; calling again with the same id merges newer metadata in.
   */
  assistant(id: string, info: { startedAt?: string | undefined; metadata?: JsonObject } = {}): void {
    if (this.message?.id === id) {
      if (info.metadata) {
        Object.assign(this.message.metadata, info.metadata);
        if (this.message.firstStep) Object.assign(this.message.firstStep.metadata, info.metadata);
      }
      return;
    }
    this.endAssistant();
    this.agentActed = true;
    this.replyTarget = undefined;
    this.message = { id, startedAt: info.startedAt, metadata: { ...(info.metadata ?? {}) }, parts: [], calls: 0, firstStep: undefined };
  }

  /** Assistant text (reasoning before a call, or the reply itself). */
  text(text: string): void {
    this.current().parts.push({ kind: 'text', text });
  }

  /** Assistant thinking / reasoning content. */
  thinking(text: string): void {
    this.current().parts.push({ kind: 'thinking', text });
  }

  /** A tool call of the current assistant message; returns its step. */
  toolCall(call: { id?: string | undefined; tool: string; params: JsonObject; startedAt?: string | undefined; metadata?: JsonObject }): StepDraft {
    const message = this.current();
    const thought = joinText([...this.carried, ...message.parts.map((p) => p.text)]);
    this.carried = [];
    message.parts = [];
    const metadata: JsonObject = message.calls === 0 ? { ...message.metadata } : {};
    Object.assign(metadata, call.metadata ?? {});
    if (call.id !== undefined && metadata.toolCallId === undefined) metadata.toolCallId = call.id;
    const step: StepDraft = {
      tool: call.tool,
      params: call.params,
      observation: '',
      thought,
      startedAt: call.startedAt ?? message.startedAt,
      metadata,
      group: message.id,
    };
    message.calls += 1;
    message.firstStep ??= step;
    this.steps.push(step);
    this.open.push({ id: call.id, step });
    return step;
  }

  /**
   * Closes the current assistant message. A message with text and no tool call becomes a `respond`
   * step; a message with only thinking passes it on to the next step's thought.
   */
  endAssistant(): void {
    const message = this.message;
    if (!message) return;
    this.message = undefined;
    if (message.calls > 0) {
      this.carried.push(...message.parts.map((p) => p.text));
      return;
    }
    const texts = message.parts.filter((p) => p.kind === 'text' && p.text.trim() !== '').map((p) => p.text);
    const thinking = message.parts.filter((p) => p.kind === 'thinking').map((p) => p.text);
    if (texts.length === 0) {
      this.carried.push(...thinking);
      return;
    }
    const step: StepDraft = {
      tool: RESPOND_TOOL,
      params: { content: texts.length === 1 ? (texts[0] ?? '') : texts.map((t) => t.trim()).join('\n\n') },
      observation: '',
      thought: joinText([...this.carried, ...thinking]),
      startedAt: message.startedAt,
      metadata: { ...message.metadata },
      group: message.id,
    };
    this.carried = [];
    this.steps.push(step);
    this.replyTarget = step;
  }

  /**
   * The result of a tool call. Matched by `id` when given (the oldest open call with that id, as some
   * logs reuse ids), else to the oldest open call. Returns false when nothing matched; the result is
   * then kept in {@link unmatchedResults}.
   */
  toolResult(result: { id?: string | undefined; observation: string; isError?: boolean; endedAt?: string | undefined; metadata?: JsonObject }): boolean {
    let at = result.id !== undefined ? this.open.findIndex((o) => o.id === result.id) : -1;
    if (at < 0 && (result.id === undefined || this.open.every((o) => o.id === undefined))) at = this.open.length > 0 ? 0 : -1;
    const entry = at >= 0 ? this.open[at] : undefined;
    if (!entry) {
      this.unmatchedResults.push({ id: result.id, observation: result.observation, ...(result.metadata ?? {}) });
      return false;
    }
    this.open.splice(at, 1);
    const step = entry.step;
    step.observation = result.observation;
    if (result.isError) step.error = { code: 'tool_error', message: firstLine(result.observation) || 'the tool reported an error' };
    const duration = elapsedMs(step.startedAt, result.endedAt);
    if (duration !== undefined) step.durationMs = duration;
    Object.assign(step.metadata, result.metadata ?? {});
    return true;
  }

  /**
   * A user message. Before the agent acts it is part of the instruction; right after a `respond` step
   * it is that step's observation (several messages are joined by a blank line); otherwise it is kept
   * in the last step's `metadata.userMessages`.
   */
  user(text: string): void {
    this.endAssistant();
    if (text.trim() === '') return;
    const last = this.steps[this.steps.length - 1];
    if (!last && !this.agentActed) {
      this.instruction.push(text);
    } else if (this.replyTarget) {
      this.replyTarget.observation = this.replyTarget.observation === '' ? text : `${this.replyTarget.observation}\n\n${text}`;
    } else if (last) {
      pushTo(last.metadata, 'userMessages', text);
    } else {
      this.instruction.push(text);
    }
  }

  /**
   * Appends `value` to the array `key` in the metadata of the current assistant message, which lands on
   * the first step that message produces (thinking signatures, unknown blocks).
   */
  messageNote(key: string, value: unknown): void {
    const message = this.current();
    pushTo(message.firstStep ? message.firstStep.metadata : message.metadata, key, value);
  }

  /**
   * Appends `value` to the array `key` of the last step's metadata (or of {@link preStepNotes}). While
   * an assistant message with text but no call yet is open (a reply in the making), the note goes to
   * that message's step instead, which is the step it follows in the log.
   */
  note(key: string, value: unknown): void {
    if (this.message && this.message.calls === 0 && this.message.parts.some((p) => p.kind === 'text' && p.text.trim() !== '')) {
      pushTo(this.message.metadata, key, value);
      return;
    }
    const last = this.steps[this.steps.length - 1];
    if (last) pushTo(last.metadata, key, value);
    else (this.preStepNotes[key] ??= []).push(value);
  }

  /** Steps so far, counting a reply still being written (an open message with text and no call). */
  get stepCount(): number {
    const pendingReply = this.message && this.message.calls === 0 && this.message.parts.some((p) => p.kind === 'text' && p.text.trim() !== '');
    return this.steps.length + (pendingReply ? 1 : 0);
  }

  /** The last step, if any. */
  get lastStep(): StepDraft | undefined {
    return this.steps[this.steps.length - 1];
  }

  /** Calls still waiting for a result. */
  get openCalls(): readonly StepDraft[] {
    return this.open.map((o) => o.step);
  }

  /**
   * Closes the conversation: open calls keep an empty observation and get
   * `metadata.missingObservation` (except calls to `terminalTools`, such as OpenHands' `finish`, which
   * never get one); assistant text after the last step is returned as `trailingThought`. `openCalls`
   * counts the calls left without a result.
   */
  finish(terminalTools: readonly string[] = []): { steps: StepDraft[]; instruction: string[]; trailingThought?: string; openCalls: number } {
    this.endAssistant();
    const missing = this.open.filter((o) => !terminalTools.includes(o.step.tool));
    for (const o of missing) o.step.metadata.missingObservation = true;
    const trailing = joinText(this.carried);
    const out: { steps: StepDraft[]; instruction: string[]; trailingThought?: string; openCalls: number } = {
      steps: this.steps,
      instruction: this.instruction,
      openCalls: missing.length,
    };
    if (trailing !== undefined) out.trailingThought = trailing;
    return out;
  }

  private current(): OpenMessage {
    if (!this.message) this.assistant(`message-${(this.autoIds += 1)}`);
    return this.message as OpenMessage;
  }
}

interface OpenMessage {
  id: string;
  startedAt: string | undefined;
  metadata: JsonObject;
  parts: { kind: 'text' | 'thinking'; text: string }[];
  calls: number;
  firstStep: StepDraft | undefined;
}

function pushTo(obj: JsonObject, key: string, value: unknown): void {
  const existing = obj[key];
  if (Array.isArray(existing)) existing.push(value);
  else obj[key] = [value];
}

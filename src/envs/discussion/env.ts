import { z } from 'zod';
import { ConfigError } from '../../core/errors.js';
import type { Action, ActionErrorInfo, Split, TaskInfo, TimeStep } from '../../core/types.js';
import { ConversationEnv, type GroupEpisode } from '../conversation-kit/conversation-env.js';
import { mentions, normalizeText } from '../conversation-kit/text.js';
import type { SimulatedUser, UserTurn } from '../conversation-kit/user.js';
import { createSimulatedUser, UserOptionsSchema } from '../conversation-kit/user-spec.js';
import { type Fact, factText } from './facts.js';
import { GROUP_PREFIX, type ParticipantScript, ScriptedParticipant, SUMMARY_PREFIX } from './participant.js';
import { DISCUSSION_DOMAIN, DISCUSSION_TASK_COUNTS, type DiscussionTask, discussionTaskId, discussionTaskInfo, getDiscussionTask, listDiscussionTasks } from './tasks.js';
import { DECIDE_TOOL, DISCUSSION_TOOLS } from './tools.js';

/** The registered id of this environment. */
export const DISCUSSION_ENV_ID = 'gymflow/discussion-v0';

/** Step limit applied by `make` (the expert needs at most 11; an agent that asks every member every topic twice, about 30). */
export const DISCUSSION_MAX_STEPS = 30;

/** Keyword arguments of the environment: who plays the participants (`conversation-kit/user-spec.ts`; one spec for all). */
export const DiscussionEnvOptionsSchema = UserOptionsSchema.strict();

/** Options accepted by {@link DiscussionEnv}. */
export type DiscussionEnvOptions = z.input<typeof DiscussionEnvOptionsSchema>;

/**
 * `gymflow/discussion-v0`: a hidden-profile discussion (Stasser & Titus 1985). The agent facilitates a
 * committee of 2–4 simulated members choosing one of three options; the briefing (shared facts, in the task
 * instruction) favours a wrong option, and each member holds a private fact that favours the right one or
 * counts against the favourite (`tasks.ts`). Members tell private facts only when asked about their topic, and
 * some only directly or when asked twice; one may argue for the favourite and pass on hearsay
 * (`participant.ts`). The right choice follows from all the facts by the rule the instruction states
 * (`facts.ts`).
 *
 * Reward (binary, when the agent decides; every other step earns 0): **1** when all three terms hold, in
 * `info.terms`:
 *
 * - `decision`: the choice is the option the pooled facts imply (`info.correct`, with the rule's totals in
 *   `info.totals`);
 * - `pooled`: every member's decisive fact was told in the conversation — a member's turn quoted the fact's cue
 *   (`info.unpooled` lists the facts never told, with their holders): the right choice by luck or by guessing
 *   does not count;
 * - `rationale`: the rationale quotes the cue of every decisive fact (`info.uncited`), so it shows why.
 *
 * An unknown member or option is an invalid action (`info.error.code` `unknown_participant`, `unknown_option`);
 * a member that fails truncates (reason `user_error`); `make`'s limit truncates at 30 steps (`max_steps`).
 */
export class DiscussionEnv extends ConversationEnv<ParticipantScript> {
  readonly domain = DISCUSSION_DOMAIN;
  readonly tools = DISCUSSION_TOOLS;
  private task: DiscussionTask | undefined;
  private readonly told = new Set<string>();
  private decision: { choice: string; rationale: string } | undefined;

  /** Throws a `ConfigError` when `options` fail {@link DiscussionEnvOptionsSchema} or name no known user. */
  constructor(options: DiscussionEnvOptions | Record<string, unknown> = {}, env: Record<string, string | undefined> = process.env) {
    const parsed = DiscussionEnvOptionsSchema.safeParse(options);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(options)'}: ${i.message}`).join('; ');
      throw new ConfigError(`${DISCUSSION_ENV_ID}: invalid options: ${issues}`);
    }
    const make = (): SimulatedUser<ParticipantScript> => createSimulatedUser(parsed.data, () => new ScriptedParticipant(), env);
    // Fails now, not at the first reset, on an unknown spec or a missing key.
    make();
    super(make);
  }

  /** The task of the current episode (tests, debugging). */
  get currentTask(): DiscussionTask | undefined {
    return this.task;
  }

  protected begin(taskId: string | undefined): GroupEpisode<ParticipantScript> {
    // The same draw as `rng.pick(listDiscussionTasks('train'))`, without generating the whole split.
    const task = getDiscussionTask(taskId ?? discussionTaskId('train', this.rng.int(0, DISCUSSION_TASK_COUNTS.train - 1)));
    this.task = task;
    this.told.clear();
    this.decision = undefined;
    return {
      task: discussionTaskInfo(task),
      opening: task.opening,
      // A model member's chat starts with the facilitator opening the meeting, answered by the member's opening.
      participants: Object.fromEntries(task.participants.map((p) => [p.name, { instruction: p.hidden, opening: p.opening, greeting: `Welcome, everyone. ${task.scenario.question}`, script: p.script }])),
    };
  }

  protected override onUserTurn(_message: string, turn: UserTurn, name: string): void {
    const p = this.task?.participants.find((x) => x.name === name);
    if (!p) return;
    const said = normalizeText(turn.text);
    for (const f of p.facts) if (said.includes(normalizeText(f.cue))) this.told.add(f.id);
  }

  protected async onTool(action: Action): Promise<TimeStep> {
    const task = this.task as DiscussionTask;
    const p = action.params;
    switch (action.tool) {
      case 'think':
        return this.observe('Thought recorded.');
      case 'address': {
        const name = this.member(String(p.participant));
        if (name === undefined) return this.invalid('unknown_participant', `no member '${String(p.participant)}'; the members are ${task.participants.map((x) => x.name).join(', ')}`);
        const message = String(p.message);
        this.transcript.add({ role: 'agent', speaker: name, text: message });
        const heard = await this.hear(name, message);
        return heard.stopped ?? this.observe(`${name}: ${heard.turn.text}`);
      }
      case 'ask_group':
        return this.toGroup(GROUP_PREFIX, String(p.question));
      case 'summarise':
        return this.toGroup(SUMMARY_PREFIX, String(p.summary));
      case DECIDE_TOOL: {
        const choice = task.options.find((o) => o.toLowerCase() === String(p.choice).trim().toLowerCase());
        if (choice === undefined) return this.invalid('unknown_option', `'${String(p.choice)}' is not an option; the options are ${task.options.join(', ')}`);
        this.decision = { choice, rationale: String(p.rationale) };
        return this.conclude(`The committee decides on ${choice}.`, 'decided');
      }
      default:
        return this.invalid('unknown_tool', `unknown tool '${action.tool}'`);
    }
  }

  protected outcome(): { reward: number; success: boolean; info: Record<string, unknown> } {
    const task = this.task as DiscussionTask;
    const d = this.decision;
    const holder = (f: Fact): string => task.participants.find((x) => x.facts.includes(f))?.name ?? '';
    const unpooled = task.decisive.filter((f) => !this.told.has(f.id));
    const uncited = task.decisive.filter((f) => !mentions(d?.rationale ?? '', f.cue));
    const terms = { decision: d?.choice === task.correct, pooled: unpooled.length === 0, rationale: d !== undefined && uncited.length === 0 };
    const success = terms.decision && terms.pooled && terms.rationale;
    return {
      reward: success ? 1 : 0,
      success,
      info: {
        terms,
        choice: d?.choice ?? null,
        correct: task.correct,
        totals: task.totals,
        unpooled: unpooled.map((f) => ({ fact: factText(f), holder: holder(f) })),
        uncited: uncited.map((f) => factText(f)),
      },
    };
  }

  /** The tasks of a split, or of both splits when omitted. */
  override listTasks(split?: Split): TaskInfo[] {
    return listDiscussionTasks(split).map(discussionTaskInfo);
  }

  /** The number of tasks of a split (or both), without generating them. */
  override countTasks(split?: Split): number {
    return split ? DISCUSSION_TASK_COUNTS[split] : DISCUSSION_TASK_COUNTS.train + DISCUSSION_TASK_COUNTS.heldout;
  }

  /** Sends `text` to every member in turn, marked with `prefix`; the observation is their answers, one line each. */
  private async toGroup(prefix: string, text: string): Promise<TimeStep> {
    const message = `${prefix}${text}`;
    this.transcript.add({ role: 'agent', speaker: 'everyone', text: prefix === GROUP_PREFIX ? text : message });
    const lines: string[] = [];
    for (const name of this.participants.keys()) {
      const heard = await this.hear(name, message);
      if (heard.stopped) return heard.stopped;
      lines.push(`${name}: ${heard.turn.text}`);
    }
    return this.observe(lines.join('\n'));
  }

  /** The member `name` names (case-insensitive), if any. */
  private member(name: string): string | undefined {
    const n = name.trim().toLowerCase();
    return [...this.participants.keys()].find((x) => x.toLowerCase() === n);
  }

  private invalid(code: string, message: string): TimeStep {
    const error: ActionErrorInfo = { code, message };
    return this.observe(`Error: ${message}`, 0, { error });
  }
}

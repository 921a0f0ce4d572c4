import { BaseEnv } from '../../core/base-env.js';
import type { Action, Split, TaskInfo, TimeStep, ToolSpec } from '../../core/types.js';
import { getRecallTask, listRecallTasks, RECALL_DOMAIN, RECALL_TASK_COUNTS, recallAnswer, recallTaskInfo, type RecallTask } from './tasks.js';

/** The registered id of this environment. */
export const RECALL_ENV_ID = 'gymflow/recall-v0';

/** Step limit applied by `make`: one call answers; a few invalid ones are allowed before the episode is cut. */
export const RECALL_MAX_STEPS = 3;

/** The one tool: `submit` (ends the episode). */
export const RECALL_TOOLS: readonly ToolSpec[] = [
  {
    name: 'submit',
    description: 'Submit the number that goes with the name asked about, and end the episode.',
    category: 'submit',
    parameters: {
      type: 'object',
      properties: { answer: { type: 'string', description: 'The number, e.g. "7".' } },
      required: ['answer'],
      additionalProperties: false,
    },
  },
];

const FORMAT_HINT = 'Call submit with {"answer": "..."}.';

/**
 * `gymflow/recall-v0`: associative recall in one tool call. The question lists one to four `name number` pairs
 * and asks for one name's number (`tasks.ts`); 4,000 training and 400 held-out tasks, every one new in its text.
 * It is the smallest setting in which a policy's success depends on a learnt skill (attend from the asked name to
 * its pair, copy the number) and in which sampling finds the right answer often when greedy decoding misses it:
 * the candidates are the numbers on the line. So it is where gymflow's RL is shown to learn on a CPU
 * (docs/trainer.md, "RL that learns").
 *
 * Reward (exact match, as in MQAR): `submit` with the asked number (surrounding whitespace ignored) earns **1**
 * and `success: true`; any other answer 0. `info.score` equals the reward, `info.reason` is `submitted`, and
 * `info.expected` is the right number. Invalid actions earn 0 and set `info.error`; an episode that reaches the
 * step limit is truncated by the `MaxSteps` wrapper with score 0.
 */
export class RecallEnv extends BaseEnv {
  readonly domain = RECALL_DOMAIN;
  readonly tools = RECALL_TOOLS;
  private task: RecallTask | undefined;

  protected async onReset(options: { task?: string }): Promise<TimeStep> {
    const task = options.task === undefined ? this.rng.pick(listRecallTasks('train')) : getRecallTask(options.task);
    this.task = task;
    return this.first(`${task.question} ${FORMAT_HINT}`, recallTaskInfo(task));
  }

  protected async onStep(action: Action): Promise<TimeStep> {
    const task = this.task as RecallTask;
    const expected = recallAnswer(task);
    const right = String(action.params.answer).trim() === expected;
    return this.end(right ? 'Correct.' : 'Incorrect.', right ? 1 : 0, { success: right, score: right ? 1 : 0, reason: 'submitted' }, { expected });
  }

  /** The tasks of a split, or of both splits when omitted. */
  override listTasks(split?: Split): TaskInfo[] {
    return listRecallTasks(split).map(recallTaskInfo);
  }

  /** How many tasks a split has (both when omitted). */
  override countTasks(split?: Split): number {
    return split ? RECALL_TASK_COUNTS[split] : RECALL_TASK_COUNTS.train + RECALL_TASK_COUNTS.heldout;
  }
}

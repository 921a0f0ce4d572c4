import { BaseEnv } from '../../core/base-env.js';
import type { Action, Split, TaskInfo, TimeStep, ToolSpec } from '../../core/types.js';
import { thinkTool } from '../shared/tool-spec.js';
import { gradeAnswer, MAX_ANSWER_LENGTH, NON_CANONICAL_CREDIT } from './answer.js';
import { evaluate } from './expression.js';
import { getMathTask, listMathTasks, MATH_DOMAIN, mathTaskInfo, type MathTask } from './tasks.js';

/** The registered id of this environment. */
export const TEXT_MATH_ENV_ID = 'gymflow/text-math-v0';

/** Step limit applied by `make` (think as often as you like, within reason). */
export const TEXT_MATH_MAX_STEPS = 10;

/** The tools of `gymflow/text-math-v0`: `think` (scratchpad) and `submit` (ends the episode). */
export const TEXT_MATH_TOOLS: readonly ToolSpec[] = [
  thinkTool('Write down intermediate reasoning. Has no effect on the task and earns no reward.'),
  {
    name: 'submit',
    description:
      'Submit the final answer and end the episode. Canonical form: an integer (42, -7) or a reduced fraction (3/4, -5/2).',
    category: 'submit',
    parameters: {
      type: 'object',
      properties: { answer: { type: 'string', description: 'The final answer, e.g. "42" or "3/4".' } },
      required: ['answer'],
      additionalProperties: false,
    },
  },
];

const FORMAT_HINT =
  'Give the exact answer as an integer (like 42 or -7) or a reduced fraction (like 3/4): call submit with {"answer": "..."}. ' +
  'You may call think first to work it out.';

/**
 * `gymflow/text-math-v0`: procedurally generated arithmetic and word problems of four difficulty
 * levels with exact answers (see `problems.ts`), 200 training and 100 held-out tasks.
 *
 * Reward (exact final-answer match, GSM8K/MATH style, plus format credit):
 * - `submit` with the exactly right value in canonical form (`42`, `-7`, `3/4`; surrounding whitespace
 *   ignored): reward **1**, `success: true`.
 * - `submit` with the right value in another exact form (`0.75`, `6/8`, `42.0`, `1,000`, `+42`,
 *   `1 1/2`): reward **0.5** ({@link NON_CANONICAL_CREDIT}), `success: false`.
 * - `submit` with a wrong or unparseable answer: reward **0**, `success: false`.
 * - `think` and invalid actions: reward 0 (invalid actions also set `info.error`).
 * - `info.score` on termination equals the submit reward; `info.reason` is `submitted`. An episode that
 *   hits the step limit is truncated by the `MaxSteps` wrapper with reason `max_steps` and scores 0.
 */
export class TextMathEnv extends BaseEnv {
  readonly domain = MATH_DOMAIN;
  readonly tools = TEXT_MATH_TOOLS;
  private task: MathTask | undefined;

  protected async onReset(options: { task?: string }): Promise<TimeStep> {
    const task = options.task === undefined ? this.rng.pick(listMathTasks('train')) : getMathTask(options.task);
    this.task = task;
    return this.first(`${task.question}\n\n${FORMAT_HINT}`, mathTaskInfo(task));
  }

  protected async onStep(action: Action): Promise<TimeStep> {
    const task = this.task as MathTask;
    if (action.tool === 'think') {
      return this.observe('Noted. Call submit with your final answer when you are ready.');
    }
    const answer = String(action.params.answer);
    const expected = evaluate(task.expr);
    const grade = gradeAnswer(answer, expected);
    const observation =
      grade.verdict === 'correct'
        ? 'Correct.'
        : grade.verdict === 'non_canonical'
          ? `Numerically correct, but not in canonical form (expected an integer or reduced fraction such as ${expected.toString()}): partial credit ${NON_CANONICAL_CREDIT}.`
          : grade.verdict === 'wrong'
            ? 'Incorrect.'
            : `Incorrect: could not read '${quoted(answer)}' as a number (expected an integer like 42 or a reduced fraction like 3/4).`;
    return this.end(
      observation,
      grade.reward,
      { success: grade.reward === 1, score: grade.reward, reason: 'submitted' },
      { verdict: grade.verdict, expected: expected.toString() },
    );
  }

  /** The tasks of a split, or of both splits when omitted. */
  override listTasks(split?: Split): TaskInfo[] {
    return listMathTasks(split).map(mathTaskInfo);
  }
}

/** An answer as the observation quotes it: no longer than a readable answer can be, so a huge one is not echoed back whole. */
function quoted(answer: string): string {
  return answer.length <= MAX_ANSWER_LENGTH ? answer : `${answer.slice(0, MAX_ANSWER_LENGTH)}… (${answer.length} characters)`;
}

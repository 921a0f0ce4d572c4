import { z } from 'zod';
import { BaseEnv } from '../../core/base-env.js';
import { ConfigError, TaskError } from '../../core/errors.js';
import type { Action, Split, TaskInfo, TimeStep, ToolSpec } from '../../core/types.js';
import { thinkTool } from '../shared/tool-spec.js';
import { EXACT_ANSWER_FORMAT, MULTIPLE_CHOICE_FORMAT } from './answer.js';
import { QaGrader, type Grade } from './grading.js';
import { loadQuestions, type Question, type QuestionSet } from './questions.js';
import { defined } from '../../core/defined.js';

/** The registered id of this environment. */
export const QA_ENV_ID = 'gymflow/qa-v0';

/** The domain (and profile) of question answering. */
export const QA_DOMAIN = 'qa';

/** Step limit applied by `make`: a few `think` steps, then the answer. */
export const QA_MAX_STEPS = 4;

/** The tools: `think` (a scratchpad) and `answer` (the response, which ends the episode). */
export const QA_TOOLS: readonly ToolSpec[] = [
  thinkTool('Write down intermediate reasoning. Has no effect and is not graded.'),
  {
    name: 'answer',
    description: 'Give your response to the question, in the format the question asks for (Explanation, Exact Answer or Answer, Confidence), and end the episode.',
    category: 'submit',
    parameters: {
      type: 'object',
      properties: { response: { type: 'string', minLength: 1, description: 'The whole response: "Explanation: …\\nExact Answer: …\\nConfidence: NN%".' } },
      required: ['response'],
      additionalProperties: false,
    },
  },
];

/** The keyword arguments of `gymflow/qa-v0`. */
export const QaEnvOptionsSchema = z
  .object({
    /** The question set evaluated on (the `heldout` split): a file in HLE's format, JSON or JSONL. */
    questions: z.string({ error: (i) => (i.input === undefined ? "missing: the path of a question set in HLE's format (JSON or JSONL; docs/qa.md)" : 'expected a file path') }).min(1),
    /** A question set to train on (the `train` split); default none. */
    trainQuestions: z.string().min(1).optional(),
    /**
     * The judge: `openai:MODEL[@BASE_URL]`, `anthropic:MODEL[@BASE_URL]`, or a judge configuration object (provider,
     * model, apiKeyEnv, baseURL, concurrency, timeoutMs, retry, maxTokens, temperature, …). Without one the rule
     * check grades.
     */
    judge: z.union([z.string().min(1), z.record(z.string(), z.unknown())]).optional(),
    /** The policy takes image input: keep the questions with an image (their image in the task's metadata). */
    imageInput: z.boolean().default(false),
  })
  .strict();

/** Options accepted by {@link QaEnv}. */
export type QaEnvOptions = z.input<typeof QaEnvOptionsSchema>;

/** Where errors about the keyword arguments point. */
const PLACE = `${QA_ENV_ID} kwargs`;

/**
 * `gymflow/qa-v0`: question answering on a question set in Humanity's Last Exam's format (`questions.ts`). An
 * episode is one question: the observation is the question and HLE's answer-format instructions, the agent may
 * `think`, and `answer { response }` ends it.
 *
 * Reward (HLE's grading, `grading.ts`): **1** when the response's final answer is judged correct against the
 * reference — by the judge model when `judge` is set (HLE's judge prompt and structured output), else by the rule
 * check — and **0** otherwise; `success` is the same, `info.score` equals the reward. The terminating step's
 * `info.confidence` is the confidence the response stated (0–1, 1 when none), kept in the trajectory's
 * `outcome.confidence`, from which `gymflow eval` reports HLE's calibration error. A judge that gives no verdict
 * (its API down through every retry, its reply invalid after the repair) ends the episode truncated with reason
 * `judge_error` and reward 0: counted as not correct, as HLE's script divides by every question.
 */
export class QaEnv extends BaseEnv {
  readonly domain = QA_DOMAIN;
  readonly tools = QA_TOOLS;
  private readonly sets: Record<Split, QuestionSet | undefined>;
  private readonly byId = new Map<string, { question: Question; split: Split }>();
  private readonly grader: QaGrader;
  private current: { question: Question; split: Split } | undefined;

  /** Throws a `ConfigError` (or the loader's `SchemaError`) naming the option, the file, the line and the field. */
  constructor(options: QaEnvOptions | Record<string, unknown> = {}, env: Record<string, string | undefined> = process.env) {
    super();
    const parsed = QaEnvOptionsSchema.safeParse(options);
    if (!parsed.success) {
      throw new ConfigError(parsed.error.issues.map((i) => `${PLACE} $${i.path.map((p) => `.${String(p)}`).join('')}: ${i.message}`).join('\n'));
    }
    const o = parsed.data;
    const read = { imageInput: o.imageInput };
    this.sets = { heldout: loadQuestions(o.questions, read), train: o.trainQuestions === undefined ? undefined : loadQuestions(o.trainQuestions, read) };
    for (const split of ['train', 'heldout'] as const) {
      for (const question of this.sets[split]?.questions ?? []) {
        const other = this.byId.get(question.id);
        if (other !== undefined) {
          throw new ConfigError(`${PLACE}: question id ${JSON.stringify(question.id)} is in both question sets (${other.question.place} and ${question.place}); a question is trained on or evaluated on, not both`);
        }
        this.byId.set(question.id, { question, split });
      }
    }
    if (this.byId.size === 0) {
      throw new ConfigError(`${PLACE}: no question to ask: every question of ${o.questions} has an image and imageInput is not set (set it when the policy takes images)`);
    }
    this.grader = QaGrader.fromOption(o.judge, PLACE, env);
  }

  /** Who grades: `judge:<provider>:<model>` or `rule`. */
  get grading(): string {
    return this.grader.kind;
  }

  protected async onReset(options: { task?: string }): Promise<TimeStep> {
    let picked: { question: Question; split: Split };
    if (options.task !== undefined) {
      const found = this.byId.get(options.task);
      if (found === undefined) throw new TaskError(`${QA_ENV_ID}: no question with id ${JSON.stringify(options.task)} in its question sets`);
      picked = found;
    } else {
      const split: Split = this.sets.train !== undefined && this.sets.train.questions.length > 0 ? 'train' : 'heldout';
      picked = { question: this.rng.pick(this.sets[split]?.questions ?? []), split };
    }
    this.current = picked;
    const info = taskInfo(picked.question, picked.split);
    return this.first(info.instruction, info);
  }

  protected async onStep(action: Action): Promise<TimeStep> {
    const { question } = this.current as { question: Question; split: Split };
    if (action.tool === 'think') return this.observe('Noted. Call answer with your response when you are ready.');
    const response = String(action.params.response);
    let grade: Grade;
    try {
      grade = await this.grader.grade(question, response);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      return {
        observation: `Your response could not be graded: ${message}`,
        reward: 0,
        terminated: false,
        truncated: true,
        info: { reason: 'judge_error', success: false, score: 0, judgeError: message },
      };
    }
    const reward = grade.correct ? 1 : 0;
    const rule = grade.rule === undefined || grade.by === 'rule' ? '' : ` (rule check: ${grade.rule.correct ? 'matches' : 'does not match'} the reference exactly)`;
    return this.end(
      `${grade.correct ? 'Correct.' : 'Incorrect.'} Answer read: ${quoted(grade.extracted)}; stated confidence ${Math.round(grade.confidence * 100)}%.${rule}`,
      reward,
      { success: grade.correct, score: reward, reason: 'answered' },
      { confidence: grade.confidence, grading: grade, expected: question.answer },
    );
  }

  /** The questions of a split, or of both when omitted. */
  override listTasks(split?: Split): TaskInfo[] {
    const splits: Split[] = split === undefined ? ['train', 'heldout'] : [split];
    return splits.flatMap((s) => (this.sets[s]?.questions ?? []).map((q) => taskInfo(q, s)));
  }

  override countTasks(split?: Split): number {
    const splits: Split[] = split === undefined ? ['train', 'heldout'] : [split];
    return splits.reduce((n, s) => n + (this.sets[s]?.questions.length ?? 0), 0);
  }

  /** The questions left out because they have an image, per file. */
  notes(): string[] {
    const out: string[] = [];
    for (const set of [this.sets.heldout, this.sets.train]) {
      if (set !== undefined && set.skippedImages > 0) {
        const all = set.skippedImages + set.questions.length;
        out.push(`${set.skippedImages} of the ${all} questions of ${set.file} have an image and were left out (the policy declares no image input; set imageInput: true if it takes images)`);
      }
    }
    return out;
  }
}

/** The public task of a question: the question and HLE's format instructions; never the answer. */
function taskInfo(q: Question, split: Split): TaskInfo {
  const format = q.answerType === 'multipleChoice' ? MULTIPLE_CHOICE_FORMAT : EXACT_ANSWER_FORMAT;
  const image = q.image === undefined ? '' : '\n\n(This question has an image: the task metadata\'s `image`.)';
  return {
    id: q.id,
    domain: QA_DOMAIN,
    instruction: `${q.question}${image}\n\n${format}\n\nCall answer with {"response": "..."} holding your whole response in that format.`,
    split,
    metadata: {
      answerType: q.answerType,
      ...defined({ category: q.category, rawSubject: q.rawSubject, image: q.image }),
    },
  };
}

/** An answer as the observation quotes it: at most 200 characters. */
function quoted(answer: string): string {
  return JSON.stringify(answer.length <= 200 ? answer : `${answer.slice(0, 200)}…`);
}

import { canonicalJson } from '../../core/canonical.js';
import { ConfigError } from '../../core/errors.js';
import type { AnswerJudge } from '../../reward/judge/answer-judge.js';
import { judgeSpecConfig, parseAnswerJudgeConfig, type AnswerJudgeConfig } from '../../reward/judge/answer-judge-config.js';
import { resolveJudgeApiKey } from '../../reward/judge/config-schema.js';
import { parseStatedAnswer, ruleCheck, type RuleVerdict } from './answer.js';
import type { Question } from './questions.js';

/**
 * Grading as HLE does: with a judge, the judge model reads the response's final answer and stated confidence and
 * decides whether it matches the reference (`src/reward/judge/answer-judge.ts`); exact-match questions also get the
 * rule check (`answer.ts`), recorded beside the judge's verdict. Without a judge the rule check decides and the
 * confidence is read from the response's `Confidence: NN%` line — 100% when it states none, as HLE's judge is told.
 */

/** One graded response. */
export interface Grade {
  correct: boolean;
  /** The stated confidence, in [0, 1]. */
  confidence: number;
  /** The final answer read off the response. */
  extracted: string;
  /** Who decided: the judge model or the rule check. */
  by: 'judge' | 'rule';
  /** The judge's reasoning. */
  reasoning?: string;
  /** The rule check (exact-match questions, and every question without a judge). */
  rule?: RuleVerdict;
}

/** The judges of this process, one per configuration (and key), so their concurrency bounds hold process-wide. */
const judges = new Map<string, Promise<AnswerJudge>>();

/** Grades responses to questions (see the module comment). */
export class QaGrader {
  /** Builds the grader of an environment's `judge` keyword argument; `place` names it in errors. */
  static fromOption(judge: unknown, place: string, env: Record<string, string | undefined> = process.env): QaGrader {
    if (judge === undefined) return new QaGrader(undefined, env);
    let config: AnswerJudgeConfig;
    try {
      config = parseAnswerJudgeConfig(typeof judge === 'string' ? judgeSpecConfig(judge) : judge, place, ['judge']);
      // The key is looked up now, so a missing one fails at make, before any episode.
      resolveJudgeApiKey(config, env);
    } catch (err) {
      if (err instanceof ConfigError && !err.message.startsWith(place)) throw new ConfigError(`${place} $.judge: ${err.message}`);
      throw err;
    }
    return new QaGrader(config, env);
  }

  private constructor(
    private readonly config: AnswerJudgeConfig | undefined,
    private readonly env: Record<string, string | undefined>,
  ) {}

  /** `judge:<provider>:<model>` or `rule`. */
  get kind(): string {
    return this.config === undefined ? 'rule' : `judge:${this.config.provider}:${this.config.model}`;
  }

  /** Grades `response` to `question`. Rejects with the judge's `JudgeError` when the judge gives no verdict. */
  async grade(question: Question, response: string): Promise<Grade> {
    const rule = ruleCheck(question, response);
    if (this.config === undefined) {
      return { correct: rule.correct, confidence: parseStatedAnswer(response).confidence ?? 1, extracted: rule.extracted, by: 'rule', rule };
    }
    const judge = await this.judge(this.config);
    const v = await judge.grade({ question: question.question, response, correctAnswer: question.answer });
    return {
      correct: v.correct,
      confidence: v.confidence / 100,
      extracted: v.extractedFinalAnswer,
      by: 'judge',
      reasoning: v.reasoning,
      ...(question.answerType === 'exactMatch' ? { rule } : {}),
    };
  }

  private judge(config: AnswerJudgeConfig): Promise<AnswerJudge> {
    const key = canonicalJson({ config, key: resolveJudgeApiKey(config, this.env).apiKey });
    let judge = judges.get(key);
    if (judge === undefined) {
      // The judge module loads the model SDKs: only when the first answer is graded, not when envs register.
      judge = import('../../reward/judge/answer-judge.js').then(({ createAnswerJudge }) => createAnswerJudge(config, { env: this.env }));
      judge.catch(() => judges.delete(key));
      judges.set(key, judge);
    }
    return judge;
  }
}

import { describe, expect, it } from 'vitest';
import { checkEnv } from '../../core/check-env.js';
import { TaskError } from '../../core/errors.js';
import type { TaskInfo } from '../../core/types.js';
import { RecallEnv } from './env.js';
import { answersInWords, FLAWED_WORD_SHARE, NUMBER_WORDS, RecallExpert, RecallWordsDemonstrator } from './expert.js';
import { getRecallTask, listRecallTasks, RECALL_TASK_COUNTS, recallAnswer } from './tasks.js';

describe('gymflow/recall-v0', () => {
  it('has 4,000 training and 400 held-out tasks, no question in both splits, one to four pairs each', () => {
    const train = listRecallTasks('train');
    const heldout = listRecallTasks('heldout');
    expect([train.length, heldout.length]).toEqual([RECALL_TASK_COUNTS.train, RECALL_TASK_COUNTS.heldout]);
    const questions = new Set(train.map((t) => t.question));
    expect(questions.size).toBe(train.length);
    expect(heldout.filter((t) => questions.has(t.question))).toEqual([]);
    expect(new Set(heldout.map((t) => t.question)).size).toBe(heldout.length);
    for (const t of [...train, ...heldout]) {
      expect(t.pairs.length).toBeGreaterThanOrEqual(1);
      expect(t.pairs.length).toBeLessThanOrEqual(4);
      expect(new Set(t.pairs.map(([, v]) => v)).size).toBe(t.pairs.length);
    }
    expect(getRecallTask('recall-heldout-00017')).toEqual(heldout[17]);
  });

  it('rewards the asked number only, and never shows the answer before the episode ends', async () => {
    const env = new RecallEnv();
    const task = getRecallTask('recall-train-00005');
    const start = await env.reset({ task: task.id });
    expect(start.observation).toContain(task.question);
    expect((start.info.task as TaskInfo).metadata).toEqual({ pairs: task.pairs.length, position: task.asked });
    expect(JSON.stringify(start.info)).not.toContain('expected');
    const right = await env.step({ tool: 'submit', params: { answer: ` ${recallAnswer(task)} ` } });
    expect(right).toMatchObject({ reward: 1, terminated: true, info: { success: true, score: 1, reason: 'submitted', expected: recallAnswer(task) } });
    const wrongAnswer = task.pairs.find((_, i) => i !== task.asked)?.[1] ?? 0;
    await env.reset({ task: task.id });
    expect(await env.step({ tool: 'submit', params: { answer: String(wrongAnswer) } })).toMatchObject({ reward: 0, info: { success: false, score: 0 } });
  });

  it('passes the env checker, and its expert solves every held-out task', async () => {
    const report = await checkEnv(() => new RecallEnv());
    expect(report.checks.filter((c) => !c.ok)).toEqual([]);
    expect(report.ok).toBe(true);
    const expert = new RecallExpert();
    const env = new RecallEnv();
    for (const t of listRecallTasks('heldout')) {
      const start = await env.reset({ task: t.id });
      const decision = await expert.act({ task: start.info.task as TaskInfo, tools: env.tools, observation: start.observation, history: [], stepIndex: 0 });
      expect((await env.step(decision.action)).info.success).toBe(true);
    }
  });

  it('has a flawed demonstrator: the expert, with ~60% of the answers as words (scored 0), the same per task', async () => {
    const flawed = new RecallWordsDemonstrator();
    const env = new RecallEnv();
    const tasks = listRecallTasks('train').slice(0, 500);
    let words = 0;
    for (const t of tasks) {
      const start = await env.reset({ task: t.id });
      const ctx = { task: start.info.task as TaskInfo, tools: env.tools, observation: start.observation, history: [], stepIndex: 0 };
      const decision = await flawed.act(ctx);
      const inWords = answersInWords(t.id, FLAWED_WORD_SHARE);
      expect(decision.action.params.answer).toBe(inWords ? NUMBER_WORDS[Number(recallAnswer(t))] : recallAnswer(t));
      expect((await env.step(decision.action)).info.success).toBe(!inWords);
      expect((await new RecallWordsDemonstrator().act(ctx)).action).toEqual(decision.action);
      words += inWords ? 1 : 0;
    }
    // 500 draws at 0.6: 300 ± 11 (sd)
    expect(words).toBeGreaterThan(260);
    expect(words).toBeLessThan(340);
    expect(() => new RecallWordsDemonstrator({ share: 1.5 })).toThrow(/share must be in \[0, 1\], got 1.5/);
  });

  it('names a malformed or out-of-range task id', () => {
    expect(() => getRecallTask('recall-test-00001')).toThrow(TaskError);
    expect(() => getRecallTask('recall-test-00001')).toThrow(/expected recall-<train\|heldout>-<5 digits>/);
    expect(() => getRecallTask('recall-heldout-00400')).toThrow(/out of range: heldout has 400 tasks/);
  });
});

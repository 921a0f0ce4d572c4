/**
 * RL that learns, at full size: tests/support/rl-recall.ts's setting on gymflow/recall-v0 (short SFT, then GRPO
 * iterations through the real path) with the whole 400-task held-out split evaluated before and after RL, pass@1
 * and pass@8 at temperature 1 on 200 held-out tasks before and after, and the paired exact McNemar test from
 * `gymflow compare`. Prints a table and writes bench/results/rl-learning.json.
 *
 *   npm run bench:rl-learning                    # the defaults below
 *   npm run bench:rl-learning -- --iterations 6  # more RL iterations
 *   npm run bench:rl-learning -- --word-share 0  # SFT on the expert's own answers
 *
 * The SFT data is the expert's with `--word-share` of the answers written as words (a flawed demonstrator; RL
 * learns from the reward that digits succeed). docs/trainer.md, "RL that learns", has what it measured.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { runBench, writeReport } from './report.js';
import { runRlRecall } from '../tests/support/rl-recall.js';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      iterations: { type: 'string', default: '4' },
      tasks: { type: 'string', default: '64' },
      'group-size': { type: 'string', default: '8' },
      heldout: { type: 'string', default: '400' },
      'passk-tasks': { type: 'string', default: '200' },
      'word-share': { type: 'string', default: '0.6' },
      keep: { type: 'boolean', default: false },
    },
  });
  const size = {
    iterations: Number(values.iterations),
    tasksPerIteration: Number(values.tasks),
    groupSize: Number(values['group-size']),
    heldout: Number(values.heldout),
    passKTasks: Number(values['passk-tasks']),
  };
  for (const [k, v] of Object.entries(size)) {
    if (!Number.isInteger(v) || v < 0) throw new Error(`--${k}: expected a whole number >= 0, got ${String(v)}`);
  }
  const wordShare = Number(values['word-share']);
  if (!(wordShare >= 0 && wordShare < 1)) throw new Error(`--word-share: expected a number in [0, 1), got ${String(values['word-share'])}`);
  const dir = mkdtempSync(join(tmpdir(), 'gymflow-bench-rl-'));
  try {
    const r = runRlRecall({ dir, ...size, wordShare, log: (line) => console.log(line) });
    const rate = (s: { successes: number; n: number }): string => `${s.successes}/${s.n} = ${(s.successes / s.n).toFixed(3)}`;
    console.log('\n| | held-out success (greedy) | pass@1 (T=1) | pass@k (T=1) |');
    console.log('| --- | --- | --- | --- |');
    console.log(`| before RL (SFT) | ${rate(r.before)} | ${r.passBefore?.pass1.toFixed(3) ?? '—'} | ${r.passBefore?.passK.toFixed(3) ?? '—'} |`);
    console.log(`| after ${size.iterations} RL iterations | ${rate(r.after)} | ${r.passAfter?.pass1.toFixed(3) ?? '—'} | ${r.passAfter?.passK.toFixed(3) ?? '—'} |`);
    console.log(
      `\ngain ${((r.after.successes - r.before.successes) / r.after.n).toFixed(3)}; McNemar exact p = ${r.mcnemar.p.toExponential(2)} ` +
        `(${r.mcnemar.onlyBefore} episodes only before, ${r.mcnemar.onlyAfter} only after, of ${r.mcnemar.pairs}); ` +
        `rollout success per iteration ${r.iterations.map((i) => i.rolloutSuccess.toFixed(3)).join(', ')}; ` +
        `sft ${r.seconds.sft} s, rl ${r.seconds.rl} s, total ${r.seconds.total} s`,
    );
    await writeReport('rl-learning', { size, wordShare, ...r });
  } finally {
    if (values.keep) console.log(`kept ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

runBench(main);

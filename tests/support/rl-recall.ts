/**
 * RL that learns, end to end on `gymflow/recall-v0`, every part real and driven through the command line as a
 * user would: expert trajectories → `gymflow export --format sft` → a deliberately short SFT
 * (examples/learning/sft-recall.yaml) → `export-onnx` → the held-out evaluation (greedy) → RL iterations, each
 * `gymflow collect --agent local:POLICY?temperature=1 --group-size G --score` on training tasks →
 * `gymflow export --format rl` → `python -m gymflow_trainer rl` (examples/learning/rl-recall.yaml) → `export-onnx`
 * → the same held-out evaluation again (same tasks, same seeds) → `gymflow compare --metric success --test mcnemar`.
 * pass@1 and pass@G (temperature 1, G samples per task) are measured on held-out tasks before and after RL.
 *
 * Used by bench/rl-learning.ts. An RL learning test in tests/ is to use it too once the setting reaches issue 45's
 * gain (it does not yet); docs/trainer.md, "RL that learns", has what was tried and measured.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { PACKAGE_ROOT } from '../../src/core/package-root.js';
import { INVALID_TOOL_CALL } from '../../src/policy/tool-call-parsing.js';
import { Rng } from '../../src/core/rng.js';
import { NUMBER_WORDS } from '../../src/envs/recall/expert.js';
import { TRAINER_ENV_DEFAULTS } from '../../src/runtime/trainer-process.js';

/** The environment of the setting. */
export const RECALL_ENV = 'gymflow/recall-v0';
/** The SFT recipe (paths rewritten per run). */
export const SFT_RECIPE = join(PACKAGE_ROOT, 'examples', 'learning', 'sft-recall.yaml');
/** The RL recipe of one iteration (paths rewritten per run). */
export const RL_RECIPE = join(PACKAGE_ROOT, 'examples', 'learning', 'rl-recall.yaml');

/** Sizes of one run. */
export interface RlRecallOptions {
  /** Working directory (store, data, checkpoints); created if missing. */
  dir: string;
  /** RL iterations (collect → score → export → train → export-onnx). */
  iterations: number;
  /** Training tasks collected per iteration (each `groupSize` times). */
  tasksPerIteration: number;
  /** GRPO group size, and the k of pass@k. */
  groupSize: number;
  /** Held-out episodes of the greedy evaluation (the first N held-out tasks, one episode each). */
  heldout: number;
  /** Held-out tasks of the pass@k measurement (each sampled `groupSize` times at temperature 1); 0: skip it. */
  passKTasks: number;
  /** Episodes run at once by collect and eval. */
  concurrency?: number;
  /** Called with each stage's line of progress. */
  log?: (line: string) => void;
  /** Seed of the run (default 0): the SFT's initialisation and data order, which answers are words, the training
   * tasks each RL iteration draws (`seed × 1000 + iteration`) and the RL trainer's; the held-out episodes stay. */
  seed?: number;
  /** Share of the SFT demonstrations whose answer is written as a word (:func:`wordDemonstrations`; default 0). */
  wordShare?: number;
  /** Start RL from this SFT model directory (a run's `final/` or a checkpoint) instead of training one. */
  sftModel?: string;
  /** Fields of the RL recipe to change (`loss` and `optim` are merged field by field). */
  rl?: Record<string, unknown>;
  /** Sampling temperature of the RL collection (default 1; pass@k is always measured at 1). */
  temperature?: number;
}

/** What one RL iteration's trainer reported. */
export interface TrainerTrace {
  /** Optimizer steps. */
  steps: number;
  /** Step samples trained (after `drop_uniform_groups`) and dropped. */
  samples: number;
  dropped: number;
  /** The first step's rollout-engine gap (step samples: the ONNX policy's log-probs against the trainer's). */
  firstMismatchKl: number | null;
  /** The first and last steps' `approx_kl` (the ratio against the behaviour policy) and the last `clip_frac`. */
  firstApproxKl: number | null;
  lastApproxKl: number | null;
  lastClipFrac: number | null;
  /** The last step's mean entropy at the trained tokens. */
  lastEntropy: number | null;
}

/** pass@1 and pass@k at temperature 1 over held-out tasks. */
export interface PassAtK {
  tasks: number;
  k: number;
  /** Mean success of the samples. */
  pass1: number;
  /** Share of tasks with at least one success among k samples (Chen et al. 2021's estimator at n = k). */
  passK: number;
}

/** What a run measured. */
export interface RlRecallResult {
  before: { successes: number; n: number };
  after: { successes: number; n: number };
  /** `gymflow compare`'s comparison of the two evaluations (A = before, B = after). */
  mcnemar: { p: number; onlyBefore: number; onlyAfter: number; pairs: number };
  /** Per RL iteration: the rollouts' success (temperature 1) and the collect and train times. */
  iterations: { rolloutSuccess: number; invalidSteps: number; trainS: number; collectS: number; trainer: TrainerTrace }[];
  passBefore: PassAtK | null;
  passAfter: PassAtK | null;
  seconds: { sft: number; rl: number; total: number };
}

const py = join(PACKAGE_ROOT, '.venv', 'bin', 'python');

function gymflow(args: string[], what: string): string {
  const r = spawnSync(process.execPath, [join(PACKAGE_ROOT, 'bin', 'gymflow.js'), ...args], { encoding: 'utf8', timeout: 900_000 });
  if (r.status !== 0) throw new Error(`${what} failed (gymflow ${args.join(' ')}):\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

function trainer(args: string[], what: string): string {
  const r = spawnSync(py, args, { encoding: 'utf8', timeout: 1_500_000, cwd: PACKAGE_ROOT, env: { ...TRAINER_ENV_DEFAULTS, ...process.env } });
  if (r.status !== 0) throw new Error(`${what} failed (python ${args.join(' ')}):\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

/** A recipe with fields changed: `loss`, `optim` and `model` objects are merged field by field. */
export function withFields(recipe: Record<string, unknown>, fields: Record<string, unknown>): Record<string, unknown> {
  const out = { ...recipe };
  for (const [k, v] of Object.entries(fields)) {
    const was = out[k];
    const merge = ['loss', 'optim', 'model'].includes(k) && typeof was === 'object' && was !== null && typeof v === 'object' && v !== null;
    out[k] = merge ? { ...(was as Record<string, unknown>), ...(v as Record<string, unknown>) } : v;
  }
  return out;
}

/** Runs a trainer command on a recipe with this run's fields; returns its `done` event's model path and its events. */
function train(command: 'sft' | 'rl', recipe: string, fields: Record<string, unknown>, configFile: string): { path: string; events: Record<string, unknown>[] } {
  const config = withFields(parseYaml(readFileSync(recipe, 'utf8')) as Record<string, unknown>, fields);
  writeFileSync(configFile, JSON.stringify(config));
  const out = trainer(['-m', 'gymflow_trainer', command, '--config', configFile], command);
  const events = out.trim().split('\n').flatMap((l) => {
    try {
      return [JSON.parse(l) as Record<string, unknown>];
    } catch {
      return [];
    }
  });
  const done = events.at(-1) ?? {};
  if (done.event !== 'done' || typeof done.path !== 'string') throw new Error(`${command} did not end with a done event:\n${out.slice(-2000)}`);
  return { path: done.path, events };
}

/** The RL trainer's events summed up (:type:`TrainerTrace`). */
function trace(events: Record<string, unknown>[]): TrainerTrace {
  const num = (e: Record<string, unknown> | undefined, k: string): number | null => (typeof e?.[k] === 'number' ? (e[k] as number) : null);
  const start = events.find((e) => e.event === 'start');
  const progress = events.filter((e) => e.event === 'progress');
  const first = progress[0];
  const last = progress.at(-1);
  return {
    steps: num(last, 'step') ?? 0,
    samples: num(start, 'samples') ?? 0,
    dropped: num(start, 'dropped') ?? 0,
    firstMismatchKl: num(first, 'mismatch_kl'),
    firstApproxKl: num(first, 'approx_kl'),
    lastApproxKl: num(last, 'approx_kl'),
    lastClipFrac: num(last, 'clip_frac'),
    lastEntropy: num(last, 'entropy'),
  };
}

/** Steps of JSONL trajectories whose completion did not parse as a tool call (the policy's format broke). */
export function invalidSteps(trajectoriesFile: string): number {
  let n = 0;
  for (const line of readFileSync(trajectoriesFile, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const t = JSON.parse(line) as { steps: { action: { tool: string } }[] };
    n += t.steps.filter((s) => s.action.tool === INVALID_TOOL_CALL).length;
  }
  return n;
}

function exportOnnx(dir: string, checkpoint: string, output: string): void {
  const cfg = join(dir, `export-${output.split('/').at(-1) ?? 'onnx'}.json`);
  writeFileSync(cfg, JSON.stringify({ kind: 'policy', checkpoint, output_dir: output }));
  trainer(['-m', 'gymflow_trainer', 'export-onnx', '--config', cfg], `export-onnx of ${checkpoint}`);
}

/** The `local:` spec of an ONNX policy: a completion limit above the longest call (~25 tokens with the recipe's BPE). */
function policy(onnx: string, temperature: number): string {
  return `local:${onnx}?temperature=${temperature}&max_new_tokens=32`;
}

/** pass@1 and pass@k from JSONL trajectories collected `k` per task. */
export function passAtK(trajectoriesFile: string, k: number): PassAtK {
  const byTask = new Map<string, boolean[]>();
  for (const line of readFileSync(trajectoriesFile, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const t = JSON.parse(line) as { task: { id: string }; outcome: { success: boolean } };
    byTask.set(t.task.id, [...(byTask.get(t.task.id) ?? []), t.outcome.success]);
  }
  const groups = [...byTask.values()];
  if (groups.some((g) => g.length !== k)) throw new Error(`${trajectoriesFile}: expected ${k} episodes per task`);
  return {
    tasks: groups.length,
    k,
    pass1: groups.reduce((s, g) => s + g.filter(Boolean).length / k, 0) / groups.length,
    passK: groups.filter((g) => g.some(Boolean)).length / groups.length,
  };
}


/**
 * Turns an SFT file of the expert's recall episodes into a flawed demonstrator's, in place: in a seeded `share` of
 * the records the answer is written as a word (`{"answer":"seven"}`), which the environment's exact match scores
 * 0. Returns how many records were changed. The SFT policy then answers in words or digits by a learnt prior, and
 * greedy decoding follows the majority; RL has to find, from the reward alone, that digits are what succeeds.
 */
export function wordDemonstrations(sftFile: string, share: number, seed = 0): number {
  const rng = new Rng(seed);
  let changed = 0;
  const out: string[] = [];
  for (const line of readFileSync(sftFile, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const rec = JSON.parse(line) as { messages: { role: string; content: string | null; tool_calls?: { function: { arguments: string } }[] | null }[] };
    if (rng.next() < share) {
      const answer = /"answer":"(\d)"/;
      for (const m of rec.messages) {
        if (m.role !== 'assistant') continue;
        const word = (text: string): string => text.replace(answer, (_, d: string) => `"answer":"${NUMBER_WORDS[Number(d)] ?? d}"`);
        if (m.content === null || !answer.test(m.content)) throw new Error(`${sftFile}: an assistant message without a one-digit answer: ${m.content ?? 'null'}`);
        m.content = word(m.content);
        for (const call of m.tool_calls ?? []) call.function.arguments = word(call.function.arguments);
      }
      changed++;
    }
    out.push(JSON.stringify(rec));
  }
  writeFileSync(sftFile, out.join('\n') + '\n');
  return changed;
}

/** The SFT of the setting in `dir`: expert episodes of every training task, exported (with `wordShare` of their
 * answers written as words, :func:`wordDemonstrations`), then the short recipe. */
export function sft(dir: string, store: string[], wordShare = 0, seed = 0): string {
  const expert = join(dir, 'expert.jsonl');
  const sftData = join(dir, 'sft.jsonl');
  gymflow(['collect', '--env', RECALL_ENV, '--agent', 'expert', '-o', expert, '--no-progress', ...store], 'collect (expert)');
  gymflow(['export', '--format', 'sft', '--in', expert, '-o', sftData, ...store], 'export sft');
  if (wordShare > 0) wordDemonstrations(sftData, wordShare, seed);
  const sftRecipe = parseYaml(readFileSync(SFT_RECIPE, 'utf8')) as { model: { tiny: Record<string, unknown> } };
  return train(
    'sft',
    SFT_RECIPE,
    { data: sftData, output_dir: join(dir, 'sft'), seed, model: { tiny: { ...sftRecipe.model.tiny, bpe_corpus: [sftData], seed } } },
    join(dir, 'sft.json'),
  ).path;
}

/** Runs the whole setting once; see the module documentation. */
export function runRlRecall(options: RlRecallOptions): RlRecallResult {
  const { dir, groupSize } = options;
  const log = options.log ?? (() => undefined);
  const concurrency = String(options.concurrency ?? 2);
  mkdirSync(dir, { recursive: true });
  const store = ['--store', join(dir, 'store')];
  const t0 = Date.now();
  const seconds = (since: number): number => Math.round((Date.now() - since) / 100) / 10;

  // SFT: every training task's expert episode, then the short recipe.
  const tSft = Date.now();
  const seed = options.seed ?? 0;
  let model = options.sftModel ?? sft(dir, store, options.wordShare ?? 0, seed);
  const sftS = seconds(tSft);
  log(`sft: ${sftS} s → ${model}`);
  let onnx = join(dir, 'policy-0');
  exportOnnx(dir, model, onnx);

  const evaluate = (name: string): { successes: number; n: number; file: string } => {
    const file = join(dir, `${name}.json`);
    gymflow(
      ['eval', '--env', RECALL_ENV, '--agent', policy(onnx, 0), '--split', 'heldout', '-n', String(options.heldout), '--seed', '0', '--concurrency', concurrency, '--out', file, ...store],
      `eval (${name})`,
    );
    const r = JSON.parse(readFileSync(file, 'utf8')) as { metrics: { success: { successes: number; n: number } } };
    log(`${name}: held-out success ${r.metrics.success.successes}/${r.metrics.success.n}`);
    return { ...r.metrics.success, file };
  };
  const measurePassK = (name: string): PassAtK | null => {
    if (options.passKTasks <= 0) return null;
    const file = join(dir, `${name}.jsonl`);
    gymflow(
      ['collect', '--env', RECALL_ENV, '--agent', policy(onnx, 1), '--split', 'heldout', '-n', String(options.passKTasks), '--group-size', String(groupSize), '--seed', '0', '--concurrency', concurrency, '-o', file, '--no-progress', ...store],
      `collect (${name})`,
    );
    const p = passAtK(file, groupSize);
    log(`${name}: pass@1 ${p.pass1.toFixed(3)}, pass@${groupSize} ${p.passK.toFixed(3)} over ${p.tasks} held-out tasks (temperature 1)`);
    return p;
  };

  const before = evaluate('eval-before');
  const passBefore = measurePassK('passk-before');

  const tRl = Date.now();
  const iterations: RlRecallResult['iterations'] = [];
  for (let i = 1; i <= options.iterations; i++) {
    const rollouts = join(dir, `rollouts-${i}.jsonl`);
    const rlData = join(dir, `rl-${i}.jsonl`);
    const tCollect = Date.now();
    // Each iteration draws its own training tasks (the schedule's seed) and scores them with the domain's rules.
    const summary = JSON.parse(
      gymflow(
        ['collect', '--env', RECALL_ENV, '--agent', policy(onnx, options.temperature ?? 1), '--split', 'train', '-n', String(options.tasksPerIteration), '--group-size', String(groupSize), '--seed', String(seed * 1000 + i), '--score', '--concurrency', concurrency, '-o', rollouts, '--no-progress', '--json', ...store],
        `collect (iteration ${i})`,
      ),
    ) as { summary: { successRate: number } };
    const collectS = seconds(tCollect);
    gymflow(['export', '--format', 'rl', '--in', rollouts, '-o', rlData, ...store], `export rl (iteration ${i})`);
    const tTrain = Date.now();
    const run = train('rl', RL_RECIPE, { seed, ...options.rl, data: rlData, output_dir: join(dir, `rl-${i}`), model: { path: model } }, join(dir, `rl-${i}.json`));
    model = run.path;
    const trainS = seconds(tTrain);
    onnx = join(dir, `policy-${i}`);
    exportOnnx(dir, model, onnx);
    const rolloutSuccess = summary.summary.successRate;
    const t = trace(run.events);
    const invalid = invalidSteps(rollouts);
    iterations.push({ rolloutSuccess, invalidSteps: invalid, trainS, collectS, trainer: t });
    const f = (x: number | null): string => (x === null ? '—' : x.toExponential(1));
    log(
      `iteration ${i}: rollout success ${rolloutSuccess.toFixed(3)}, invalid steps ${invalid}; ${t.steps} steps on ${t.samples} samples ` +
        `(${t.dropped} dropped), mismatch_kl ${f(t.firstMismatchKl)}, approx_kl ${f(t.firstApproxKl)} → ${f(t.lastApproxKl)}, ` +
        `clip ${f(t.lastClipFrac)}, entropy ${f(t.lastEntropy)} (collect ${collectS} s, train ${trainS} s)`,
    );
  }
  const rlS = seconds(tRl);

  const after = evaluate('eval-after');
  const passAfter = measurePassK('passk-after');
  const report = JSON.parse(gymflow(['compare', before.file, after.file, '--metric', 'success', '--test', 'mcnemar', '--alpha', '0.01', '--json', ...store], 'compare')) as {
    comparisons: { mcnemar: { p: number; onlyA: number; onlyB: number; pairs: number } | null }[];
  };
  const m = report.comparisons[0]?.mcnemar;
  if (!m) throw new Error('gymflow compare gave no McNemar test for the two evaluations (episodes did not match)');
  log(`compare: McNemar p ${m.p.toExponential(2)} (only before ${m.onlyA}, only after ${m.onlyB}, of ${m.pairs})`);
  return {
    before: { successes: before.successes, n: before.n },
    after: { successes: after.successes, n: after.n },
    mcnemar: { p: m.p, onlyBefore: m.onlyA, onlyAfter: m.onlyB, pairs: m.pairs },
    iterations,
    passBefore,
    passAfter,
    seconds: { sft: sftS, rl: rlS, total: seconds(t0) },
  };
}

import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { ConfigError } from '../../core/errors.js';
import { getProfile } from '../../core/profiles/index.js';
import { spec } from '../../core/registry.js';
import type { Split } from '../../core/types.js';
import { collect, type CollectOptions, type CollectProgress, type CollectSummary } from '../../hub/collect.js';
import { resolveAgent } from '../../policy/specs.js';
import { scoreTrajectory } from '../../reward/score.js';
import { checkedEnvKwargs, parseInteger, parsePositiveInteger, printJson, withEnvKwargsOptions, type EnvKwargsOpts } from '../options.js';
import { openStore, withStoreOption } from './store.js';
import { defined } from '../../core/defined.js';

interface CollectOpts extends EnvKwargsOpts {
  env: string;
  agent: string;
  n?: number;
  concurrency: number;
  groupSize: number;
  split: Split;
  seed: number;
  maxSteps?: number;
  task?: string[];
  out: string;
  parent?: string[];
  store?: string;
  json?: boolean;
  score?: boolean;
  force?: boolean;
  progress: boolean;
}

function parseSplit(value: string): Split {
  if (value !== 'train' && value !== 'heldout') throw new InvalidArgumentError(`expected train or heldout, got '${value}'`);
  return value;
}

function seconds(ms: number): string {
  const s = Math.round(ms / 1000);
  return s >= 3600 ? `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m` : s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s` : `${s}s`;
}

/** One progress line: bar, episodes, success so far, rate, ETA. */
export function progressLine(p: CollectProgress, width = 24): string {
  const frac = p.total ? p.done / p.total : 1;
  const filled = Math.round(frac * width);
  const bar = `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}]`;
  const success = p.done ? (p.successes / p.done).toFixed(3) : '-';
  const fails = p.failures ? `  failures ${p.failures}` : '';
  return `${bar} ${p.done}/${p.total}  success ${success}  ${p.rate.toFixed(1)} ep/s  ETA ${seconds(p.etaMs)}${fails}`;
}

/**
 * A progress reporter: on a TTY it redraws one line with `\r` (at most 10 times a second); otherwise it
 * prints a plain line every `everyMs` (default 5 s) and at the end.
 */
export function progressReporter(stream: NodeJS.WriteStream, options: { everyMs?: number } = {}): { update(p: CollectProgress): void; done(): void } {
  const tty = stream.isTTY === true;
  const every = tty ? 100 : (options.everyMs ?? 5000);
  let last = 0;
  let pending: CollectProgress | undefined;
  let drawn = false;
  const draw = (p: CollectProgress): void => {
    if (tty) stream.write(`\r${progressLine(p)}\u001b[K`);
    else stream.write(`${progressLine(p)}\n`);
    drawn = true;
    pending = undefined;
  };
  return {
    update(p) {
      const now = Date.now();
      if (now - last >= every || p.done === p.total) {
        last = now;
        draw(p);
      } else pending = p;
    },
    done() {
      if (pending) draw(pending);
      if (tty && drawn) stream.write('\n');
    },
  };
}

function printSummary(s: CollectSummary, where: string): void {
  const fails = Object.entries(s.failures.byKind)
    .map(([k, n]) => `${k}=${n}`)
    .join(' ');
  console.log(
    `${s.episodes} episodes in ${(s.wallMs / 1000).toFixed(1)} s (${s.episodesPerSecond.toFixed(1)} ep/s): success ${s.successRate.toFixed(3)}, ` +
      `mean reward ${s.meanReward.toFixed(3)}, mean steps ${s.meanSteps.toFixed(2)}, truncated ${s.truncated}, failures ${s.failures.total}${fails ? ` (${fails})` : ''}` +
      `${s.tokens.prompt + s.tokens.completion > 0 ? `, tokens ${s.tokens.prompt}+${s.tokens.completion}` : ''}${s.aborted ? ' [interrupted]' : ''}`,
  );
  console.log(where);
}

/** Whether `-o` names a JSONL file (else it is a ref name in the store). */
export function isFileOutput(out: string): boolean {
  return /\.jsonl$/i.test(out) || out.includes('\\') || out.startsWith('.') || out.startsWith('/');
}

/** `gymflow collect`: many episodes in parallel, recorded (and stored) as a trajectory set. */
export function collectCommand(program: Command): void {
  withEnvKwargsOptions(withStoreOption(program.command('collect')))
    .description('run many episodes in parallel and record them as a trajectory set')
    .requiredOption('--env <id>', 'environment id, e.g. gymflow/tool-use-v0')
    .requiredOption('--agent <spec>', 'agent: expert | random | openai:MODEL[@BASE_URL] | anthropic:MODEL | local:DIR[?temperature=T&top_p=P&max_new_tokens=N]')
    .option('-n, --n <groups>', 'number of tasks to draw (episodes = n × group size; default: every task of the split once)', parsePositiveInteger)
    .option('--concurrency <k>', 'episodes in flight', parsePositiveInteger, 1)
    .option('--group-size <g>', 'episodes per task (GRPO-style groups)', parsePositiveInteger, 1)
    .option('--split <split>', 'train | heldout tasks', parseSplit, 'train')
    .option('--seed <s>', 'base seed of the schedule', parseInteger, 0)
    .option('--max-steps <n>', 'step limit per episode', parsePositiveInteger)
    .option('--task <id...>', 'run these task ids (in order) instead of drawing from the split')
    .requiredOption('-o, --out <ref|file.jsonl>', 'a ref name in the store, or a .jsonl file')
    .option('--parent <ref...>', 'extra parents of the stored set (e.g. the policy checkpoint)')
    .option('--score', "score every trajectory with the reward rules of the env's domain profile")
    .option('--force', 'replace an existing -o file, or move an existing -o name (by default either is an error)')
    .option('--json', 'print the summary as JSON')
    .option('--no-progress', 'no progress output')
    .action(async (opts: CollectOpts) => {
      const profile = opts.score ? getProfile(spec(opts.env).domain) : undefined;
      const envKwargs = await checkedEnvKwargs(opts.env, opts);
      const toFile = isFileOutput(opts.out);
      if (toFile && opts.parent !== undefined) throw new ConfigError(`--parent records lineage in the store; -o ${opts.out} is a file (give a ref name to store the set)`);
      const store = toFile ? undefined : await openStore(opts, true);
      const ac = new AbortController();
      const onSigint = (): void => {
        process.stderr.write('\ninterrupted: finishing the episodes in flight (Ctrl-C again to quit now)\n');
        ac.abort();
        process.off('SIGINT', onSigint);
      };
      process.on('SIGINT', onSigint);
      const reporter = opts.progress ? progressReporter(process.stderr) : undefined;
      const options: CollectOptions = {
        envId: opts.env,
        ...defined({ envKwargs }),
        agent: opts.agent,
        resolveAgent,
        concurrency: opts.concurrency,
        groupSize: opts.groupSize,
        split: opts.split,
        seed: opts.seed,
        signal: ac.signal,
        ...defined({ n: opts.n, maxSteps: opts.maxSteps, tasks: opts.task, parents: opts.parent }),
        ...(profile ? { rewardFn: (t) => scoreTrajectory(t, { profile }) } : {}),
        ...(reporter ? { onProgress: (p: CollectProgress) => reporter.update(p) } : {}),
        ...(store === undefined ? { out: opts.out } : { store, name: opts.out }),
        ...(opts.force ? { force: true } : {}),
      };
      try {
        const result = await collect(options);
        reporter?.done();
        const { failures, episodes } = result.summary;
        for (const [kind, message] of Object.entries(failures.firstMessage ?? {})) console.error(`failed ${failures.byKind[kind] ?? 0}× ${kind}, first: ${message}`);
        // Every episode failed (a model that does not load, a key the API refuses): the data is no data.
        if (episodes > 0 && failures.total >= episodes) process.exitCode = 1;
        if (opts.json) return printJson({ ref: result.ref ?? null, taskSetRef: result.taskSetRef ?? null, path: result.path ?? null, summary: result.summary });
        printSummary(result.summary, result.ref ? `stored ${result.ref} as ${opts.out} in ${store?.location}` : `wrote ${result.path}`);
      } finally {
        process.off('SIGINT', onSigint);
      }
    });
}

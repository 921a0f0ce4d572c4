/**
 * Sandbox benchmark, gymflow next to a raw dockerode baseline, in one run on one engine:
 *
 * - reset, same task: a warm-pool hit (`SandboxPool.reset` swaps in a spare already restored to the task;
 *   the used container is recycled in the background) vs the naive reset (a fresh container: create +
 *   start + first exec);
 * - reset, another task: a pool miss, i.e. the in-place restore (one exec: wipe, extract the task's tar),
 *   tasks cycled so that no spare is ever ready, vs the same naive reset;
 * - exec round trip: `Sandbox.exec(['true'])` (timeout wrapper, stray killer, output cap) vs a plain
 *   dockerode exec of `true`;
 * - episodes/s with 1, 8 and 32 environments in parallel: the expert solving tasks in `gymflow/sandbox-v0`
 *   (reset, 3 tool calls, submit = pytest) vs a raw episode (fresh container, extract, apply, pytest, remove).
 *
 * Prints a table and writes bench/results/sandbox.json. Usage: `npx tsx bench/sandbox.ts [--quick]`.
 * Needs the engine and the image (`gymflow sandbox build-image`).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Duplex } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type Docker from 'dockerode';
import { initialContext } from '../src/core/agent.js';
import { formatTable } from '../src/cli/table.js';
import { SandboxEnv } from '../src/envs/sandbox/env.js';
import { SandboxExpert } from '../src/envs/sandbox/expert.js';
import { builtinTasks } from '../src/envs/sandbox/tasks.js';
import { initialArchive } from '../src/envs/sandbox/workspace.js';
import { DEFAULT_IMAGE, dockerClient, packTar, Sandbox, SandboxPool } from '../src/sandbox/index.js';

const quick = process.argv.includes('--quick');
const N = quick ? 10 : 30;
const PARALLEL = [1, 8, 32];

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? NaN;
}

async function time<T>(fn: () => Promise<T>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

/** A plain dockerode exec: create, start (hijacked), drain, inspect. */
async function rawExec(c: Docker.Container, cmd: string[], stdin?: Buffer): Promise<number> {
  const e = await c.exec({ Cmd: cmd, AttachStdout: true, AttachStderr: true, AttachStdin: stdin !== undefined });
  const s = (await e.start({ hijack: true, stdin: stdin !== undefined })) as Duplex;
  const done = new Promise<void>((r) => {
    s.on('end', r);
    s.on('close', r);
  });
  s.resume();
  if (stdin) s.end(stdin);
  await done;
  return (await e.inspect()).ExitCode ?? -1;
}

async function rawContainer(d: Docker): Promise<Docker.Container> {
  const c = await d.createContainer({ Image: DEFAULT_IMAGE, Cmd: ['sleep', 'infinity'], Labels: { 'gymflow.sandbox': '1', 'gymflow.sandbox.owner-pid': String(process.pid), 'gymflow.sandbox.owner-host': os.hostname() }, HostConfig: { NetworkMode: 'none', Init: true } });
  await c.start();
  return c;
}

async function main(): Promise<void> {
  const loadavgStart = os.loadavg();
  const d = dockerClient();
  const tasks = builtinTasks();
  const task = tasks[0]!;
  const results: Record<string, unknown> = {};

  // ---- baseline: create + start + first exec (what a reset costs without warm containers)
  const naive: number[] = [];
  for (let i = 0; i < N; i++) {
    let c: Docker.Container | undefined;
    naive.push(await time(async () => {
      c = await rawContainer(d);
      await rawExec(c, ['true']);
    }));
    await c?.remove({ force: true });
  }
  // ---- baseline: plain exec round trip
  const raw = await rawContainer(d);
  const plain: number[] = [];
  for (let i = 0; i < N; i++) plain.push(await time(() => rawExec(raw, ['true'])));
  await raw.remove({ force: true });

  // ---- gymflow: reset (warm-pool hit and miss) and exec. Each episode dirties /work first; the pool's
  // background work (recycling, preparing) finishes between resets, outside the clock, as it does while an
  // agent works (an episode takes seconds).
  const loadavgResetStart = os.loadavg();
  let sb = await Sandbox.create({ task: task.id });
  const MISS_TASKS = 6; // more tasks than the pool's 4 spares, visited in a cycle: the LRU spare is always gone
  const archives: Buffer[] = [];
  for (const t of tasks.slice(0, MISS_TASKS)) archives.push(await initialArchive(sb, t));
  const archive = archives[0]!;
  const pool = new SandboxPool();
  const dirty = (): Promise<unknown> => sb.shell('echo dirty > x.txt; rm -rf * .git; sleep 60 &');
  const timedReset = async (a: Buffer, into: number[]): Promise<boolean> => {
    await dirty();
    const t0 = performance.now();
    const r = await pool.reset(sb, a, { task: task.id });
    into.push(performance.now() - t0);
    sb = r.sandbox;
    await pool.idle();
    return r.hit;
  };
  await timedReset(archive, []); // warm-up: the first reset to the task misses and prepares its spare
  const hits: number[] = [];
  let hitCount = 0;
  for (let i = 0; i < N; i++) if (await timedReset(archive, hits)) hitCount += 1;
  const misses: number[] = [];
  let missCount = 0;
  for (let i = 0; i < N; i++) if (!(await timedReset(archives[(i % (MISS_TASKS - 1)) + 1]!, misses))) missCount += 1;
  const execs: number[] = [];
  for (let i = 0; i < N; i++) execs.push(await time(() => sb.exec(['true'])));
  await sb.destroy();
  await pool.close();

  const naiveStats = { p50: pct(naive, 50), p95: pct(naive, 95) };
  results.reset = {
    sameTask: { gymflow: { p50: pct(hits, 50), p95: pct(hits, 95), hits: hitCount, of: N }, baseline: naiveStats },
    otherTask: { gymflow: { p50: pct(misses, 50), p95: pct(misses, 95), misses: missCount, of: N }, baseline: naiveStats },
    archiveBytes: archive.length,
    poolStats: { ...pool.stats },
    loadavg: { start: loadavgResetStart, end: os.loadavg() },
  };
  results.exec = { gymflow: { p50: pct(execs, 50), p95: pct(execs, 95) }, baseline: { p50: pct(plain, 50), p95: pct(plain, 95) } };

  // ---- episodes/s: gymflow and baseline rounds alternate (the host may be shared; alternation spreads the noise)
  const ROUNDS = quick ? 1 : 2;
  const episodes: Record<string, unknown>[] = [];
  for (const k of PARALLEL) {
    const perWorker = k === 1 ? (quick ? 3 : 5) : k === 8 ? (quick ? 1 : 2) : 1;
    // gymflow: k environments, each with its container created before the clock starts (they live across episodes).
    const envs = Array.from({ length: k }, () => new SandboxEnv());
    await Promise.all(envs.map((e, i) => e.reset({ task: tasks[i % tasks.length]!.id, seed: i })));
    let solved = 0;
    const gymRound = async (): Promise<number> => {
      const t0 = performance.now();
      await Promise.all(
        envs.map(async (env, w) => {
          for (let e = 0; e < perWorker; e++) {
            const first = await env.reset({ task: tasks[(w + e * k) % tasks.length]!.id, seed: e });
            const agent = new SandboxExpert();
            let ctx = initialContext(first, env.tools);
            let ts = first;
            for (let s = 0; s < 6 && !ts.terminated && !ts.truncated; s++) {
              ts = await env.step((await agent.act(ctx)).action);
              ctx = { ...ctx, stepIndex: s + 1, observation: ts.observation };
            }
            if (ts.info.success === true) solved += 1;
          }
        }),
      );
      return (k * perWorker) / ((performance.now() - t0) / 1000);
    };
    // baseline: a fresh container per episode, files in by tar, fix by `patch`, pytest, remove.
    const rawRound = async (): Promise<number> => {
      const t1 = performance.now();
      await Promise.all(
        Array.from({ length: k }, async (_, w) => {
          for (let e = 0; e < perWorker; e++) {
            const t = tasks[(w + e * k) % tasks.length]!;
            const c = await rawContainer(d);
            try {
              const files = Object.entries({ ...t.files, ...t.testFiles }).filter((x): x is [string, string] => x[1] !== null);
              await rawExec(c, ['tar', '-x', '-C', '/work', '-f', '-'], await packTar([...files.map(([p, content]) => ({ path: p, content })), { path: 'fix.patch', content: t.patch }]));
              await rawExec(c, ['patch', '-p1', '-i', 'fix.patch']);
              await rawExec(c, ['sh', '-c', t.testCmd]);
            } finally {
              await c.remove({ force: true });
            }
          }
        }),
      );
      return (k * perWorker) / ((performance.now() - t1) / 1000);
    };
    const gym: number[] = [];
    const base: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      gym.push(await gymRound());
      base.push(await rawRound());
    }
    await Promise.all(envs.map((e) => e.close()));
    const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
    episodes.push({
      parallel: k,
      episodes: k * perWorker * ROUNDS,
      solved,
      gymflowEpisodesPerSecond: mean(gym),
      baselineEpisodesPerSecond: mean(base),
      rounds: { gymflow: gym, baseline: base },
    });
  }
  results.episodes = episodes;

  const info = await d.version();
  const out = { when: new Date().toISOString(), host: { cpus: os.cpus().length, memGiB: Math.round(os.totalmem() / 2 ** 30), loadavgStart, loadavgEnd: os.loadavg() }, engine: { version: info.Version, api: info.ApiVersion }, n: N, ...results };
  type Row = { gymflow: { p50: number; p95: number }; baseline: { p50: number; p95: number } };
  const r = results.reset as { sameTask: Row & { gymflow: { hits: number } }; otherTask: Row & { gymflow: { misses: number } } };
  const ex = results.exec as Row;
  const cell = (x: { p50: number; p95: number }): string => `${x.p50.toFixed(1)} / ${x.p95.toFixed(1)}`;
  const la = (xs: number[]): string => xs.map((x) => x.toFixed(2)).join(' ');
  const resetLoad = (results.reset as { loadavg: { start: number[]; end: number[] } }).loadavg;
  console.log(`load average (1/5/15 min): run start ${la(loadavgStart)}, reset rows ${la(resetLoad.start)} → ${la(resetLoad.end)}, run end ${la(os.loadavg())}`);
  console.log(
    formatTable(
      [
        { metric: 'reset, same task (ms)', gymflow: cell(r.sameTask.gymflow), baseline: cell(r.sameTask.baseline), note: `p50 / p95; warm-pool hit (${r.sameTask.gymflow.hits}/${N} hits); baseline = create+start+exec` },
        { metric: 'reset, other task (ms)', gymflow: cell(r.otherTask.gymflow), baseline: cell(r.otherTask.baseline), note: `p50 / p95; pool miss = one-exec restore (${r.otherTask.gymflow.misses}/${N} misses)` },
        { metric: 'exec round trip (ms)', gymflow: cell(ex.gymflow), baseline: cell(ex.baseline), note: 'p50 / p95; baseline = plain dockerode exec' },
        ...episodes.map((e) => ({ metric: `episodes/s, ${String(e.parallel)} parallel`, gymflow: (e.gymflowEpisodesPerSecond as number).toFixed(2), baseline: (e.baselineEpisodesPerSecond as number).toFixed(2), note: `${String(e.episodes)} gymflow episodes (${String(e.solved)} solved), mean of rounds; baseline = fresh container each` })),
      ],
      [{ key: 'metric' }, { key: 'gymflow', align: 'right' }, { key: 'baseline', align: 'right' }, { key: 'note' }],
    ),
  );
  const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'results');
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'sandbox.json'), `${JSON.stringify(out, null, 2)}\n`);
  console.log(`wrote ${path.join(dir, 'sandbox.json')}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

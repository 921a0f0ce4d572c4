/**
 * The cost of the episode journal (docs/store.md, "Journals") on collection: episodes per second of `collect()` on
 * `gymflow/tool-use-v0` at concurrency 8, with every finished episode appended to a journal in a fresh store (as
 * `collectShard` does) and without, for two agents:
 * - `expert`: the scripted expert in-process, well under a millisecond per episode — the worst case, where the
 *   journal's write is a large part of an episode;
 * - `expert+10ms`: the same with 10 ms per decision, a stand-in for a model answering over the network (a fast
 *   one: real models take 100 ms to seconds per step);
 * each `collect()` alone (the journal writes each trajectory as JSON, as an evaluation's does) and with a store, as a
 * collection shard runs (`+ store`: the set is stored, and the journal writes the stored form `collect` makes once for
 * both: the journal's part is then its writes).
 * Each configuration runs `--repeats` times (default 5; alternating with and without) for at least MIN_SECONDS;
 * medians are reported with the overhead. Target (issue 46): the journal costs ≤ 5% of episodes per second. Two
 * rates each: per second of wall-clock time, and per second of this process's CPU time (all its threads, so the
 * journal's syncs count): on a machine shared with other work the wall-clock rate swings by a third from run to
 * run, more than the cost measured, and the CPU rate of the CPU-bound `expert` less (with the 10 ms agent the
 * process mostly waits, and only the wall-clock rate means anything). Then, steadier still, the journal's own CPU
 * per append (the expert's trajectories appended as `collect` appends them), in each form, against an episode's CPU
 * time without the journal. Prints the tables and writes
 * `bench/results/journal.json` (with every sample and the load average).
 *
 * Usage: `npx tsx bench/journal.ts [--repeats 5]`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Agent, AgentResolver } from '../src/core/agent.js';
import { registerBuiltinEnvs } from '../src/envs/index.js';
import { collect } from '../src/hub/collect.js';
import type { Trajectory } from '../src/core/trajectory.js';
import { EpisodeJournal } from '../src/hub/store/journal.js';
import { ArtifactStore } from '../src/hub/store/store.js';
import { storedTrajectory, type StoredTrajectory } from '../src/hub/store/trajectory-set.js';
import { resolveAgent } from '../src/policy/specs.js';
import { formatTable } from '../src/cli/table.js';
import { median, runBench, writeReport } from './report.js';
import { defined } from '../src/core/defined.js';

const ENV = 'gymflow/tool-use-v0';
const CONCURRENCY = 8;
const MIN_SECONDS = 2;
const { values } = parseArgs({ options: { repeats: { type: 'string', default: '5' } } });
const REPEATS = Number(values.repeats);
if (!Number.isSafeInteger(REPEATS) || REPEATS < 1) throw new Error(`--repeats: expected a positive integer, got '${values.repeats}'`);
const TARGET_OVERHEAD = 0.05;

/** The expert, each decision `delayMs` later. */
function delayed(delayMs: number): AgentResolver {
  if (delayMs === 0) return resolveAgent;
  return (spec, envId, o) => {
    const inner = resolveAgent(spec, envId, o);
    const agent: Agent = {
      info: inner.info,
      act: async (ctx) => {
        await new Promise((resolve) => setTimeout(resolve, delayMs));
        return inner.act(ctx);
      },
    };
    return agent;
  };
}

/** Episodes per second of wall-clock time and of CPU time. */
interface Rate {
  wall: number;
  cpu: number;
}

/** The rates of one run of `n` episodes, journaled or not, stored or not. */
async function rate(n: number, delayMs: number, journaled: boolean, stored: boolean): Promise<Rate> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'gymflow-bench-journal-'));
  const journal = journaled ? await EpisodeJournal.open(root, 'bench') : undefined;
  const store = stored ? await ArtifactStore.open({ root }) : undefined;
  try {
    const t0 = process.hrtime.bigint();
    const c0 = process.cpuUsage();
    await collect({
      resolveAgent: delayed(delayMs),
      envId: ENV,
      agent: 'expert',
      n,
      concurrency: CONCURRENCY,
      seed: 1,
      ...defined({ store }),
      ...(journal ? { onEpisode: (i: number, t: Trajectory, form: () => StoredTrajectory) => journal.append(i, t, store ? form() : undefined) } : {}),
    });
    await journal?.close();
    const cpu = process.cpuUsage(c0);
    return { wall: n / (Number(process.hrtime.bigint() - t0) / 1e9), cpu: n / ((cpu.user + cpu.system) / 1e6) };
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

/**
 * The journal's own CPU per episode, in µs: appending `trajectories` (`CONCURRENCY` appenders, each awaiting its
 * append before the next, as `collect` does) and closing the journal, in the stored form (made beforehand: `collect`
 * makes it for the set anyway) or as JSON. Far steadier on a loaded machine than the difference of two rates.
 */
async function appendCost(trajectories: readonly Trajectory[], forms: readonly StoredTrajectory[] | undefined): Promise<number> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'gymflow-bench-journal-'));
  try {
    const journal = await EpisodeJournal.open(root, 'bench');
    const c0 = process.cpuUsage();
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        for (let i = next++; i < trajectories.length; i = next++) await journal.append(i, trajectories[i] as Trajectory, forms?.[i]);
      }),
    );
    await journal.close();
    const cpu = process.cpuUsage(c0);
    return (cpu.user + cpu.system) / trajectories.length;
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  registerBuiltinEnvs();
  const rows: Record<string, unknown>[] = [];
  const load = [os.loadavg()[0]];
  for (const [agent, delayMs, stored] of [['expert', 0, false], ['expert', 0, true], ['expert+10ms', 10, false], ['expert+10ms', 10, true]] as const) {
    const name = stored ? `${agent} + store` : agent;
    // Sized so that a run lasts about MIN_SECONDS without the journal.
    const probe = await rate(delayMs === 0 ? 2000 : 80, delayMs, false, stored);
    const n = Math.max(50, Math.round(probe.wall * MIN_SECONDS));
    const plain: Rate[] = [];
    const withJournal: Rate[] = [];
    for (let i = 0; i < REPEATS; i++) {
      // Alternating which goes first, so that a change of load between the two does not always favour one.
      for (const journaled of i % 2 === 0 ? [false, true] : [true, false]) (journaled ? withJournal : plain).push(await rate(n, delayMs, journaled, stored));
    }
    const wall = [median(plain.map((r) => r.wall)), median(withJournal.map((r) => r.wall))] as const;
    const cpu = [median(plain.map((r) => r.cpu)), median(withJournal.map((r) => r.cpu))] as const;
    const overhead = { wall: 1 - wall[1] / wall[0], cpu: 1 - cpu[1] / cpu[0] };
    // The CPU rate where the process is CPU-bound; with the 10 ms agent it mostly waits: the wall-clock rate.
    const judged = delayMs === 0 ? overhead.cpu : overhead.wall;
    rows.push({ agent: name, episodes: n, plain: wall[0], journaled: wall[1], plainCpu: cpu[0], journaledCpu: cpu[1], overhead, judgedBy: delayMs === 0 ? 'cpu' : 'wall', target: judged <= TARGET_OVERHEAD ? `≤ 5% ok` : `> 5% MISSED`, samples: { plain, journaled: withJournal } });
    load.push(os.loadavg()[0]);
  }
  // The journal's own cost against an episode's CPU time (from the rates above, without the journal).
  const trajectories: Trajectory[] = [];
  await collect({ resolveAgent, envId: ENV, agent: 'expert', n: 2000, concurrency: CONCURRENCY, seed: 2, onEpisode: async (_i, t) => void trajectories.push(t) });
  const forms = trajectories.map((t) => storedTrajectory(t));
  const costs = { json: [] as number[], stored: [] as number[] };
  for (let i = 0; i < Math.max(REPEATS, 5); i++) {
    costs.json.push(await appendCost(trajectories, undefined));
    costs.stored.push(await appendCost(trajectories, forms));
  }
  const episodeUs = (name: string): number => 1e6 / ((rows.find((r) => r.agent === name)?.plainCpu as number | undefined) ?? Number.NaN);
  const appends = [
    { form: 'JSON (an evaluation; collect() alone)', agent: 'expert', us: median(costs.json), samples: costs.json },
    { form: 'stored form (a collection shard)', agent: 'expert + store', us: median(costs.stored), samples: costs.stored },
  ].map((a) => ({ ...a, episodeUs: episodeUs(a.agent), share: median(a.samples) / episodeUs(a.agent) }));
  const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;
  console.log(
    formatTable(
      rows.map((r) => {
        const o = r.overhead as { wall: number; cpu: number };
        return { ...r, plain: (r.plain as number).toFixed(0), journaled: (r.journaled as number).toFixed(0), wallOverhead: pct(o.wall), plainCpu: (r.plainCpu as number).toFixed(0), journaledCpu: (r.journaledCpu as number).toFixed(0), cpuOverhead: pct(o.cpu), target: `${r.target as string} (${r.judgedBy as string})` };
      }),
      [
        { key: 'agent' },
        { key: 'episodes', align: 'right' },
        { key: 'plain', header: 'episodes/s', align: 'right' },
        { key: 'journaled', header: 'journaled', align: 'right' },
        { key: 'wallOverhead', header: 'overhead', align: 'right' },
        { key: 'plainCpu', header: 'per CPU-s', align: 'right' },
        { key: 'journaledCpu', header: 'journaled', align: 'right' },
        { key: 'cpuOverhead', header: 'overhead', align: 'right' },
        { key: 'target' },
      ],
    ),
  );
  console.log(`\nThe journal's own CPU per episode (${trajectories.length} of the expert's trajectories appended, median of ${costs.json.length}), against an episode's CPU without it:\n`);
  console.log(
    formatTable(
      appends.map((a) => ({ form: a.form, us: a.us.toFixed(1), episode: `${a.episodeUs.toFixed(0)} (${a.agent})`, share: pct(a.share) })),
      [{ key: 'form', header: 'journal line' }, { key: 'us', header: 'µs CPU per append', align: 'right' }, { key: 'episode', header: 'µs CPU per episode', align: 'right' }, { key: 'share', header: 'share', align: 'right' }],
    ),
  );
  console.log(`\nload average (1 min) during the runs: ${load.map((l) => l?.toFixed(1)).join(' → ')}`);
  console.log(`\nwrote ${await writeReport('journal', { concurrency: CONCURRENCY, repeats: REPEATS, loadDuringRuns: load, rows, appends })}`);
}

runBench(main);

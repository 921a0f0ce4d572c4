/**
 * The cost of the episode journal (docs/store.md, "Journals") on collection: episodes per second of `collect()` on
 * `gymflow/tool-use-v0` at concurrency 8, with every finished episode appended to a journal in a fresh store (as
 * `collectShard` does) and without, for two agents:
 * - `expert`: the scripted expert in-process, well under a millisecond per episode — the worst case, where the
 *   journal's write is a large part of an episode;
 * - `expert+10ms`: the same with 10 ms per decision, a stand-in for a model answering over the network (a fast
 *   one: real models take 100 ms to seconds per step).
 * Each configuration runs REPEATS times (alternating with and without) for at least MIN_SECONDS; medians are
 * reported with the overhead. Target (issue 46): the journal costs ≤ 5% of episodes per second. Prints a table and
 * writes `bench/results/journal.json`.
 *
 * Usage: `npx tsx bench/journal.ts`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Agent, AgentResolver } from '../src/core/agent.js';
import { registerBuiltinEnvs } from '../src/envs/index.js';
import { collect } from '../src/hub/collect.js';
import { EpisodeJournal } from '../src/hub/store/journal.js';
import { resolveAgent } from '../src/policy/specs.js';
import { formatTable } from '../src/cli/table.js';
import { median, runBench, writeReport } from './report.js';

const ENV = 'gymflow/tool-use-v0';
const CONCURRENCY = 8;
const MIN_SECONDS = 2;
const REPEATS = 5;
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

/** Episodes per second of one run of `n` episodes, journaled or not. */
async function rate(n: number, delayMs: number, journaled: boolean): Promise<number> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'gymflow-bench-journal-'));
  const journal = journaled ? await EpisodeJournal.open(root, 'bench') : undefined;
  try {
    const t0 = process.hrtime.bigint();
    await collect({
      resolveAgent: delayed(delayMs),
      envId: ENV,
      agent: 'expert',
      n,
      concurrency: CONCURRENCY,
      seed: 1,
      ...(journal ? { onEpisode: (i: number, t: Parameters<EpisodeJournal['append']>[1]) => journal.append(i, t) } : {}),
    });
    await journal?.close();
    return n / (Number(process.hrtime.bigint() - t0) / 1e9);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  registerBuiltinEnvs();
  const rows: Record<string, unknown>[] = [];
  for (const [name, delayMs] of [['expert', 0], ['expert+10ms', 10]] as const) {
    // Sized so that a run lasts about MIN_SECONDS without the journal.
    const probe = await rate(delayMs === 0 ? 2000 : 80, delayMs, false);
    const n = Math.max(50, Math.round(probe * MIN_SECONDS));
    const plain: number[] = [];
    const withJournal: number[] = [];
    for (let i = 0; i < REPEATS; i++) {
      plain.push(await rate(n, delayMs, false));
      withJournal.push(await rate(n, delayMs, true));
    }
    const a = median(plain);
    const b = median(withJournal);
    const overhead = 1 - b / a;
    rows.push({ agent: name, episodes: n, plain: a, journaled: b, overhead, target: overhead <= TARGET_OVERHEAD ? `≤ 5% ok` : `> 5% MISSED` });
  }
  console.log(
    formatTable(
      rows.map((r) => ({ ...r, plain: (r.plain as number).toFixed(0), journaled: (r.journaled as number).toFixed(0), overhead: `${((r.overhead as number) * 100).toFixed(1)}%` })),
      [{ key: 'agent' }, { key: 'episodes', align: 'right' }, { key: 'plain', header: 'episodes/s', align: 'right' }, { key: 'journaled', header: 'journaled', align: 'right' }, { key: 'overhead', align: 'right' }, { key: 'target' }],
    ),
  );
  console.log(`\nwrote ${await writeReport('journal', { concurrency: CONCURRENCY, repeats: REPEATS, rows })}`);
}

runBench(main);

import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { parseTrajectory, type Trajectory } from '../../src/core/trajectory.js';
import { evaluate } from '../../src/eval/evaluate.js';
import type { EpisodeRecord } from '../../src/eval/metrics.js';
import { collect } from '../../src/hub/collect.js';
import { exportDataset } from '../../src/hub/export/export.js';
import { SftRecordSchema, type SftRecord } from '../../src/hub/export/schemas.js';
import { resolveAgent } from '../../src/policy/specs.js';
import { gymflowSync, registryTools } from './cli.js';

/** An environment as `gymflow envs --json` lists it. */
export interface ListedEnv {
  id: string;
  domain: string;
  agents: string[];
  trainTasks: number;
  heldoutTasks: number;
}

/** The entry of `envId` in `gymflow envs --json` (the built CLI), or undefined when it is not listed. */
export function listedEnv(envId: string): ListedEnv | undefined {
  return (JSON.parse(gymflowSync('envs', '--json').stdout) as ListedEnv[]).find((e) => e.id === envId);
}

/** `n` episodes of `agent` on the held-out tasks of `envId` (2 at a time, seed 3): what the env tests export and score. */
export async function collectHeldout(envId: string, agent: string, n: number): Promise<Trajectory[]> {
  return (await collect({ resolveAgent, envId, agent, n, split: 'heldout', concurrency: 2, seed: 3 })).trajectories;
}

/** What the CLI tests of an environment share: a scratch directory and held-out episodes ({@link useHeldoutEpisodes}). */
export interface HeldoutEpisodes {
  dir: string;
  expert: Trajectory[];
  random: Trajectory[];
}

/**
 * For the tests of the enclosing `describe`: `beforeAll` makes a scratch directory and collects `counts.expert`
 * expert and `counts.random` random episodes of `envId` ({@link collectHeldout}); `afterAll` removes the directory.
 * Returns a getter for the tests, which throws if the collection did not finish.
 */
export function useHeldoutEpisodes(envId: string, counts: { expert: number; random: number }): () => HeldoutEpisodes {
  let episodes: HeldoutEpisodes | undefined;
  let dir: string | undefined;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), `gymflow-${envId.replace(/^gymflow\//, '')}-`));
    const expert = await collectHeldout(envId, 'expert', counts.expert);
    const random = await collectHeldout(envId, 'random', counts.random);
    episodes = { dir, expert, random };
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  return () => {
    if (!episodes) throw new Error(`the held-out episodes of ${envId} were not collected`);
    return episodes;
  };
}

/** The episodes of the expert and of the random agent on the same `n` held-out tasks of `envId` (`evaluate`, seed 1). */
export async function evaluateExpertAndRandom(envId: string, n: number): Promise<{ expert: EpisodeRecord[]; random: EpisodeRecord[] }> {
  const expert = await evaluate({ envId, agent: 'expert', resolveAgent, n, seed: 1 });
  const random = await evaluate({ envId, agent: 'random', resolveAgent, n, seed: 1 });
  return { expert: expert.episodes, random: random.episodes };
}

/** `gymflow run-episode --env ENV --agent AGENT --seed 3` (the built CLI): expects exit 0 and returns what it printed. */
export function runEpisodeCli(envId: string, agent: string): string {
  const r = gymflowSync('run-episode', '--env', envId, '--agent', agent, '--seed', '3');
  expect(r.status, r.stderr).toBe(0);
  return r.stdout;
}

/**
 * Exports `trajectories` as SFT records (`exportDataset`, with the registered environments' tools) to
 * `dir/sft.jsonl`; expects one record a trajectory and returns the records, each checked against the schema.
 */
export async function exportSft(dir: string, trajectories: Trajectory[]): Promise<SftRecord[]> {
  const out = path.join(dir, 'sft.jsonl');
  expect((await exportDataset({ format: 'sft', trajectories, out, tools: registryTools })).records).toBe(trajectories.length);
  return (await readFile(out, 'utf8')).trim().split('\n').map((line) => SftRecordSchema.parse(JSON.parse(line)));
}

/** The tool each assistant message of an SFT record calls, in order. */
export function calledTools(record: SftRecord): (string | undefined)[] {
  return record.messages.filter((m) => m.role === 'assistant').map((m) => m.tool_calls?.[0]?.function.name);
}

/** The contents of an SFT record's tool messages (the observations), in order. */
export function toolResults(record: SftRecord): (string | null)[] {
  return record.messages.filter((m) => m.role === 'tool').map((m) => m.content);
}

/**
 * Scores `trajectories` with `gymflow reward score FILE --domain DOMAIN` (the built CLI, no judge configured), in
 * `dir`: expects it to exit 0 having scored every one, each with the rule layer and a score ≥ 0 on every step, and
 * returns them as scored.
 */
export async function scoreWithRules(dir: string, trajectories: readonly Trajectory[], domain: string): Promise<Trajectory[]> {
  const runs = path.join(dir, 'runs.jsonl');
  await writeFile(runs, trajectories.map((t) => JSON.stringify(t)).join('\n') + '\n');
  const scored = path.join(dir, 'scored.jsonl');
  const r = gymflowSync('reward', 'score', runs, '--domain', domain, '-o', scored, '--json');
  expect(r.status, r.stderr).toBe(0);
  expect(JSON.parse(r.stdout)).toMatchObject({ scored: trajectories.length, skipped: 0, judge: null });
  const out = (await readFile(scored, 'utf8')).trim().split('\n').map((l, i) => parseTrajectory(JSON.parse(l), `scored.jsonl:${i + 1}`));
  for (const t of out) {
    expect(t.reward?.layers).toHaveProperty('rules');
    for (const s of t.steps) expect(s.reward?.score).toBeGreaterThanOrEqual(0);
  }
  return out;
}

/** The reward totals of the trajectories played by agent `name` (0 where one has none). */
export function rewardTotals(trajectories: readonly Trajectory[], name: string): number[] {
  return trajectories.filter((t) => t.agent.name === name).map((t) => t.reward?.total ?? 0);
}

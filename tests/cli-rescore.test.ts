import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ArtifactStore } from '../src/hub/store/store.js';
import { loadTrajectories } from '../src/hub/store/trajectory-set.js';
import { gymflowSync } from './support/cli.js';

const gymflow = gymflowSync;

// `gymflow reward rescore` on a set `gymflow collect` stored: the real CLI (dist/), a real store.
describe('gymflow reward rescore', { timeout: 240_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'gymflow-rescore-'));
  const store = join(dir, 'store');
  // Expert and random episodes of the same tasks, scored by collect with the env's own profile (tool-use).
  for (const [agent, name] of [['expert', 'runs/expert'], ['random', 'runs/random']] as const) {
    const r = gymflow('collect', '--env', 'gymflow/tool-use-v0', '--agent', agent, '-n', '3', '--seed', '5', '--score', '-o', name, '--store', store, '--no-progress', '--json');
    if (r.status !== 0) throw new Error(`collect failed: ${r.stderr}`);
  }

  it('stores a new scored set over the same trajectories, with the source as its parent', async () => {
    const cfg = join(dir, 'generic.yaml');
    writeFileSync(cfg, 'profile: generic\nconcurrency: 2\n');
    const r = gymflow('reward', 'rescore', 'runs/expert', '--config', cfg, '--name', 'runs/expert-generic', '--store', store, '--json');
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout) as { ref: string; source: string; sourceKind: string; profile: string; envId: string; before: { episodes: number; meanReward: number }; after: { episodes: number; meanReward: number } };
    expect(out).toMatchObject({ sourceKind: 'scored-trajectories', profile: 'generic', envId: 'gymflow/tool-use-v0', name: 'runs/expert-generic' });

    const s = await ArtifactStore.open({ root: store });
    const source = await s.resolve('runs/expert');
    expect(out.source).toBe(source);
    expect(await s.resolve('runs/expert-generic')).toBe(out.ref);
    const entry = await s.stat(out.ref);
    expect(entry.kind).toBe('scored-trajectories');
    expect(entry.parents).toEqual([source]);
    expect(entry.meta).toMatchObject({ rescoredFrom: source, reward: { profile: 'generic', concurrency: 2, enabled: true } });

    // The same episodes (ids and steps), other rewards: the generic profile weighs the rubrics otherwise.
    const [before, after] = [await loadTrajectories(s, source), await loadTrajectories(s, out.ref)];
    expect(after.map((t) => t.id)).toEqual(before.map((t) => t.id));
    expect(after.map((t) => t.steps.map((st) => st.action))).toEqual(before.map((t) => t.steps.map((st) => st.action)));
    const stepScores = (ts: typeof before): unknown[] => ts.map((t) => t.steps.map((st) => st.reward?.rubrics));
    expect(stepScores(after)).not.toEqual(stepScores(before));
    for (const t of after) for (const st of t.steps) expect(st.reward?.score).toBeGreaterThanOrEqual(0);
    expect(out.after.episodes).toBe(before.length);
    expect(out.before.meanReward).toBeCloseTo(before.reduce((a, t) => a + (t.reward?.total ?? 0), 0) / before.length, 9);

    // The readable output names the new ref; a whole pipeline configuration's reward section serves too.
    const pipeline = join(dir, 'pipeline.yaml');
    writeFileSync(pipeline, 'name: x\nenv: gymflow/tool-use-v0\nreward:\n  profile: tool-use\n');
    const again = gymflow('reward', 'rescore', source, '--config', pipeline, '--store', store);
    expect(again.status).toBe(0);
    expect(again.stdout).toMatch(/with profile tool-use/);
    // Rescoring with the profile the set was scored with gives back the same set, content-addressed.
    const same = again.stdout.trim().split('\n').at(-1)?.split(/\s+/)[0];
    expect(same).toBe(source);

    // Lineage: the new set descends from the collected one.
    const lineage = gymflow('store', 'lineage', out.ref, '--store', store);
    expect(lineage.status).toBe(0);
    expect(lineage.stdout).toContain(source.replace(/^sha256:/, '').slice(0, 12));
  });

  it('names the file and field of a bad reward configuration, and refuses what it cannot rescore', () => {
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'profile: generic\nconcurency: 2\n');
    const r = gymflow('reward', 'rescore', 'runs/expert', '--config', bad, '--store', store);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/bad\.yaml:2 \$: Unrecognized key: "concurency"/);

    const unknownProfile = join(dir, 'astro.yaml');
    writeFileSync(unknownProfile, 'profile: astrology\n');
    expect(gymflow('reward', 'rescore', 'runs/expert', '--config', unknownProfile, '--store', store).stderr).toMatch(/astrology/);

    const off = join(dir, 'off.yaml');
    writeFileSync(off, 'enabled: false\n');
    expect(gymflow('reward', 'rescore', 'runs/expert', '--config', off, '--store', store).stderr).toMatch(/off\.yaml \$\.enabled: false turns scoring off/);

    expect(gymflow('reward', 'rescore', 'runs/nothing', '--config', join(dir, 'generic.yaml'), '--store', store).stderr).toMatch(/runs\/nothing/);
    expect(gymflow('reward', 'rescore', 'runs/expert', '--config', join(dir, 'missing.yaml'), '--store', store).stderr).toMatch(/missing\.yaml: cannot read the reward configuration/);
  });
});

/**
 * SWE-bench-format images and grading (`gymflow/swe-v0`, `gymflow eval --benchmark swe-bench`), on the six
 * instances of src/envs/swe/__fixtures__ (two small repositories with real histories; three repo/versions):
 *
 * - cold build: the instance's image when neither its environment image (repo/version layer) nor its own exists —
 *   the environment layer (checkout at the setup commit, env_setup, Python check, commit) plus the instance layer;
 * - instance layer, environment cached: the instance's image when its repo/version's environment image exists
 *   (checkout at the base commit, pre_install/install, pack /work, commit) — measured for all six after the
 *   instance images alone are removed;
 * - present: asking for an image that exists (one inspect);
 * - grading per instance: `gradePrediction` of the gold patch with the image present (a fresh hardened sandbox,
 *   /work restored from the image, patch, test patch, the spec's tests, parse) — the harness's cost per instance.
 *
 * Each round uses fresh images (a new nonce in the specs) and removes them at the end. Prints a table and writes
 * `bench/results/swe-images.json`. Usage: `npm run bench:swe-images [-- --rounds N]`. Needs the engine and the base
 * image (`gymflow sandbox build-image`).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatTable } from '../src/cli/table.js';
import { buildSweFixture } from '../src/envs/swe/__fixtures__/swe-fixture.js';
import { gradePrediction } from '../src/envs/swe/harness.js';
import { ensureInstanceImage, pruneSweImages } from '../src/envs/swe/images.js';
import { loadInstances } from '../src/envs/swe/instances.js';
import { loadSpecs, specFor } from '../src/envs/swe/specs.js';
import { DEFAULT_IMAGE, dockerClient, inspectImage } from '../src/sandbox/index.js';
import { median, runBench, writeReport } from './report.js';

const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const ROUNDS = Number(arg('--rounds') ?? 3);

type Stat = {
  what: string;
  n: number;
  p50Ms: number;
  meanMs: number;
  minMs: number;
  maxMs: number;
};

function stat(what: string, xs: readonly number[]): Stat {
  const r = (x: number): number => Math.round(x);
  return { what, n: xs.length, p50Ms: r(median(xs)), meanMs: r(xs.reduce((a, b) => a + b, 0) / xs.length), minMs: r(Math.min(...xs)), maxMs: r(Math.max(...xs)) };
}

async function main(): Promise<void> {
  if (!(await inspectImage(DEFAULT_IMAGE))) throw new Error(`no ${DEFAULT_IMAGE}: run \`gymflow sandbox build-image\` first`);
  const info = (await dockerClient().version()) as { Version: string; ApiVersion: string };
  const cold: number[] = [];
  const coldEnv: number[] = [];
  const coldInstance: number[] = [];
  const instanceOnly: number[] = [];
  const present: number[] = [];
  const grade: number[] = [];
  const gradeBy: Record<string, number[]> = {};
  for (let round = 0; round < ROUNDS; round++) {
    const dir = mkdtempSync(join(tmpdir(), 'gymflow-swe-bench-'));
    const refs = new Set<string>();
    try {
      const fx = buildSweFixture(dir, randomBytes(4).toString('hex'));
      const instances = loadInstances(fx.instancesFile);
      const specs = loadSpecs(fx.specsFile);
      const source = { repos: fx.reposDir, repoUrl: false as const };
      // Cold: the first instance of each repo/version pays for its environment layer too.
      for (const i of instances) {
        const t = performance.now();
        const r = await ensureInstanceImage(i, specFor(i, specs), source);
        const total = performance.now() - t;
        refs.add(r.env.ref).add(r.instance.ref);
        if (r.env.built) {
          cold.push(total);
          coldEnv.push(r.env.durationMs);
          coldInstance.push(total - r.env.durationMs);
        }
      }
      // Instance layers alone, on the cached environment images.
      await pruneSweImages({ keepEnv: true, filter: (row) => refs.has(row.ref) });
      for (const i of instances) {
        const t = performance.now();
        const r = await ensureInstanceImage(i, specFor(i, specs), source);
        if (r.env.built || !r.instance.built) throw new Error(`round ${round}: ${i.instanceId}: expected only the instance layer to be built`);
        instanceOnly.push(performance.now() - t);
      }
      for (const i of instances) {
        const t = performance.now();
        const r = await ensureInstanceImage(i, specFor(i, specs), source);
        if (r.instance.built) throw new Error(`round ${round}: ${i.instanceId}: rebuilt an image that was there`);
        present.push(performance.now() - t);
      }
      for (const i of instances) {
        const g = await gradePrediction(i, specFor(i, specs), { instance_id: i.instanceId, model_name_or_path: 'gold', model_patch: i.patch }, { ...source, timeoutS: 300 });
        if (g.outcome !== 'resolved') throw new Error(`round ${round}: ${i.instanceId}: the gold patch did not resolve (${g.outcome}${g.error ? `: ${g.error}` : ''})`);
        grade.push(g.gradeMs);
        (gradeBy[i.instanceId] ??= []).push(g.gradeMs);
      }
      console.error(`round ${round + 1}/${ROUNDS} done`);
    } finally {
      await pruneSweImages({ filter: (row) => refs.has(row.ref) });
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const rows = [
    stat('cold build: environment + instance layer', cold),
    stat('  of which the environment layer', coldEnv),
    stat('  of which the instance layer', coldInstance),
    stat('instance layer, environment cached', instanceOnly),
    stat('image present (lookup)', present),
    stat('grading per instance (gold patch, image present)', grade),
    ...Object.entries(gradeBy).map(([id, xs]) => stat(`  grading ${id}`, xs)),
  ];
  console.log(`engine ${info.Version} (API ${info.ApiVersion}); ${ROUNDS} round(s) of 6 instances over 3 repo/versions`);
  console.log(formatTable(rows, [{ key: 'what' }, { key: 'n', align: 'right' }, { key: 'p50Ms', header: 'p50 ms', align: 'right' }, { key: 'meanMs', header: 'mean ms', align: 'right' }, { key: 'minMs', header: 'min ms', align: 'right' }, { key: 'maxMs', header: 'max ms', align: 'right' }]));
  await writeReport('swe-images', { engine: { version: info.Version, api: info.ApiVersion }, rounds: ROUNDS, instances: 6, repoVersions: 3, rows });
}

runBench(main);

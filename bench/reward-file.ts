/**
 * `gymflow reward score` on a file: MB/s and steps/s of `scoreFile` (read, parse, check each line's schema and
 * content id, score with the rule layer, serialise, write) in one thread and with scoring threads
 * (`--workers`), on the same file; and `gymflow record validate` (`validateFile`: read, parse, check the schema and
 * the content id) on it, in one thread; and export (`readTrajectoryFile` of the scored output, then `exportDataset` as
 * SFT records to a file), in one thread.
 *
 * The file is synthetic coding trajectories of 50 steps (bench/synthetic-trajectories.ts) with their content
 * ids, ~`--mb` MB (default 40). Each setting runs `--repeats` times (default 3), alternating, in this process;
 * the median is reported. Thread counts: 1, 2 and the cores the process may use (when more than 2), or
 * `--workers 1,2,4`. Prints a table and writes `bench/results/reward-file.json`.
 *
 *     npx tsx bench/reward-file.ts [--mb 40] [--repeats 3] [--workers 1,2,4]
 */
import { mkdtemp, rename, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { getProfile } from '../src/core/profiles/registry.js';
import { trajectoryId } from '../src/core/trajectory.js';
import { exportDataset } from '../src/hub/export/export.js';
import { readTrajectoryFile } from '../src/hub/export/input.js';
import { validateFile } from '../src/recorder/validate.js';
import { scoreFile } from '../src/reward/score-file.js';
import { median, runBench, writeReport } from './report.js';
import { syntheticTrajectory } from './synthetic-trajectories.js';

const { values } = parseArgs({ options: { mb: { type: 'string', default: '40' }, repeats: { type: 'string', default: '3' }, workers: { type: 'string' } } });

/** A positive number of an option, or an error naming it. */
function positive(name: string, text: string, integer: boolean): number {
  const n = Number(text);
  if (!(n > 0) || !Number.isFinite(n) || (integer && !Number.isSafeInteger(n))) throw new Error(`--${name}: expected a positive ${integer ? 'integer' : 'number'}, got '${text}'`);
  return n;
}

const MB = positive('mb', values.mb, false);
const REPEATS = positive('repeats', values.repeats, true);
const CORES = os.availableParallelism();
const WORKERS = (values.workers ?? [1, 2, ...(CORES > 2 ? [CORES] : [])].join(',')).split(',').map((w) => positive('workers', w, true));
const STEPS = 50;

async function main(): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gymflow-bench-reward-file-'));
  try {
    const input = path.join(dir, 'runs.jsonl');
    const lines: string[] = [];
    let bytes = 0;
    for (let seed = 0; bytes < MB * 1e6; seed++) {
      const t = syntheticTrajectory(STEPS, seed);
      const line = JSON.stringify({ ...t, id: trajectoryId(t) });
      lines.push(line);
      bytes += line.length + 1;
    }
    await writeFile(input, `${lines.join('\n')}\n`);
    const size = (await stat(input)).size;
    const steps = lines.length * STEPS;
    const profile = getProfile('coding');
    const seconds = new Map<string, number[]>();
    const cpuSeconds = new Map<string, number[]>();
    /** Times `run` as setting `name`, in wall-clock and CPU seconds. */
    const timed = async (name: string, run: () => Promise<void>): Promise<void> => {
      const start = process.hrtime.bigint();
      const c0 = process.cpuUsage();
      await run();
      const cpu = process.cpuUsage(c0);
      seconds.set(name, [...(seconds.get(name) ?? []), Number(process.hrtime.bigint() - start) / 1e9]);
      cpuSeconds.set(name, [...(cpuSeconds.get(name) ?? []), (cpu.user + cpu.system) / 1e6]);
    };
    const load = [os.loadavg()[0]];
    const scored = path.join(dir, 'scored.jsonl');
    let scoredSize = 0;
    for (let r = 0; r < REPEATS; r++) {
      for (const workers of WORKERS) {
        const out = path.join(dir, `scored-${workers}.jsonl`);
        await timed(`score ${workers}`, async () => {
          const summary = await scoreFile(input, out, { profile, workers });
          if (summary.scored !== lines.length) throw new Error(`scored ${summary.scored} of ${lines.length} lines (workers ${workers}): ${summary.errors.slice(0, 3).join('; ')}`);
        });
        if (r === 0 && workers === WORKERS[0]) {
          await rename(out, scored);
          scoredSize = (await stat(scored)).size;
        } else await rm(out);
      }
      await timed('validate', async () => {
        const report = await validateFile(input);
        if (report.valid !== lines.length) throw new Error(`validated ${report.valid} of ${lines.length} lines: ${report.problems.slice(0, 3).map((p) => p.message).join('; ')}`);
      });
      const exported = path.join(dir, 'sft.jsonl');
      await timed('export', async () => {
        const trajectories = await readTrajectoryFile(scored);
        const report = await exportDataset({ format: 'sft', trajectories, out: exported });
        if (report.records !== lines.length) throw new Error(`exported ${report.records} of ${lines.length} trajectories`);
      });
      await rm(exported);
      load.push(os.loadavg()[0]);
    }
    const base = median(seconds.get(`score ${WORKERS[0] as number}`) ?? []);
    // MB of the file each command reads: the input, or (export) the scored output.
    const row = (command: string, name: string, workers: number, bytes = size): Record<string, unknown> => {
      const s = median(seconds.get(name) ?? []);
      const cpu = median(cpuSeconds.get(name) ?? []);
      return { command, workers, bytes, seconds: s, cpuSeconds: cpu, mbPerSecond: bytes / 1e6 / s, mbPerCpuSecond: bytes / 1e6 / cpu, stepsPerSecond: steps / s, speedup: base / s, samples: seconds.get(name), cpuSamples: cpuSeconds.get(name) };
    };
    const rows = [...WORKERS.map((workers) => row('reward score', `score ${workers}`, workers)), row('record validate', 'validate', 1), row('export (sft, of the scored file)', 'export', 1, scoredSize)];
    console.log(`scoreFile and validateFile on ${(size / 1e6).toFixed(1)} MB (${lines.length} trajectories of ${STEPS} steps), export on the scored ${(scoredSize / 1e6).toFixed(1)} MB, ${CORES} cores, median of ${REPEATS}\n`);
    console.log('| command | workers | seconds | MB/s | CPU seconds | MB per CPU-s | steps/s | speed-up |');
    console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
    for (const r of rows) {
      const n = (k: string): number => r[k] as number;
      console.log(`| ${r.command as string} | ${n('workers')} | ${n('seconds').toFixed(2)} | ${n('mbPerSecond').toFixed(1)} | ${n('cpuSeconds').toFixed(2)} | ${n('mbPerCpuSecond').toFixed(1)} | ${Math.round(n('stepsPerSecond')).toLocaleString('en-US')} | ${r.command === 'reward score' ? `${n('speedup').toFixed(2)}×` : ''} |`);
    }
    console.log(`\nload average (1 min) during the runs: ${load.map((l) => l?.toFixed(1)).join(' → ')}`);
    await writeReport('reward-file', { bytes: size, scoredBytes: scoredSize, trajectories: lines.length, stepsPerTrajectory: STEPS, repeats: REPEATS, loadDuringRuns: load, rows });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

runBench(main);

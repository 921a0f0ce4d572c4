import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, SchemaError } from '../../core/errors.js';
import { Rng } from '../../core/rng.js';
import { makeTrajectory, type Trajectory } from '../../core/trajectory.js';
import { fitCalibration, fitCalibrationFromFiles, loadCalibration, readTrajectoriesFile, saveCalibration } from './fit.js';
import { parseHumanLabels, type HumanLabel } from './labels.js';
import { pairLabels } from './pairing.js';
import { defined } from '../../core/defined.js';

const dir = mkdtempSync(join(tmpdir(), 'gymflow-calibration-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A scored trajectory on task `task` whose steps carry the given step scores and whose total is `total`. */
function scored(task: string, stepScores: readonly (number | undefined)[], total?: number): Trajectory {
  return makeTrajectory({
    task: { id: task, domain: 'math', instruction: `solve ${task}` },
    envId: 'gymflow/text-math-v0',
    agent: { name: 'a' },
    steps: stepScores.map((s, index) => ({
      index,
      action: { tool: 'calc', params: { expr: `${task}-${index}` } },
      observation: 'ok',
      startedAt: '2026-01-01T00:00:00.000Z',
      durationMs: 1,
      ...defined({ reward: s !== undefined ? { score: s, rubrics: {} } : undefined }),
    })),
    outcome: { success: true, score: 1, terminated: true, truncated: false, reason: 'submitted' },
    ...defined({ reward: total !== undefined ? { total, outcome: 1, process: total, efficiency: 1, layers: {} } : undefined }),
    metadata: {},
  });
}

describe('human labels', () => {
  it('parses JSONL and names file, line and JSON path of every bad line', () => {
    const text = [
      '{"trajectoryId":"sha256:ab","stepIndex":0,"score":0.5}',
      '',
      '{"trajectoryId":"sha256:ab","stepIndex":-1,"score":"high"}',
      'not json',
      '{"trajectoryId":"sha256:ab","stepindex":2,"score":1}',
    ].join('\n');
    try {
      parseHumanLabels(text, 'labels.jsonl');
      expect.fail('should throw');
    } catch (err) {
      expect(err).toBeInstanceOf(SchemaError);
      const issues = (err as SchemaError).issues;
      expect(issues[0]).toBe('labels.jsonl:3 $.stepIndex: Too small: expected number to be >=0');
      expect(issues[1]).toBe('labels.jsonl:3 $.score: Invalid input: expected number, received string');
      expect(issues[2]).toMatch(/^labels\.jsonl:4 \$: invalid JSON/);
      expect(issues[3]).toMatch(/^labels\.jsonl:5 \$: Unrecognized key: "stepindex"/);
    }
    expect(parseHumanLabels('{"trajectoryId":"x","score":3,"annotator":"ann1"}\n', 'l')).toEqual([{ trajectoryId: 'x', score: 3, annotator: 'ann1' }]);
  });
});

describe('pairing labels with automatic scores', () => {
  const t1 = scored('t1', [0.2, 0.8, undefined], 0.6);
  const t2 = scored('t2', [0.4], undefined);

  it('pairs step labels with step scores, averages repeated labels and reports the unmatched', () => {
    const labels: HumanLabel[] = [
      { trajectoryId: t1.id, stepIndex: 0, score: 1 },
      { trajectoryId: t1.id, stepIndex: 0, score: 2 },
      { trajectoryId: t1.id, stepIndex: 1, score: 5 },
      { trajectoryId: t1.id, stepIndex: 2, score: 3 },
      { trajectoryId: t1.id, stepIndex: 9, score: 3 },
      { trajectoryId: 'sha256:nope', stepIndex: 0, score: 3 },
    ];
    const p = pairLabels(labels, [t1, t2]);
    expect(p.level).toBe('step');
    expect(p.pairs).toEqual([
      { trajectoryId: t1.id, stepIndex: 0, auto: 0.2, human: 1.5, labels: 2 },
      { trajectoryId: t1.id, stepIndex: 1, auto: 0.8, human: 5, labels: 1 },
    ]);
    expect(p.unmatched.map((u) => u.reason)).toEqual(['step not scored', 'no such step', 'unknown trajectory']);
  });

  it('pairs trajectory labels with reward totals', () => {
    const p = pairLabels([{ trajectoryId: t1.id, score: 4 }, { trajectoryId: t2.id, score: 2 }], [t1, t2]);
    expect(p.level).toBe('trajectory');
    expect(p.pairs).toEqual([{ trajectoryId: t1.id, auto: 0.6, human: 4, labels: 1 }]);
    expect(p.unmatched).toEqual([{ trajectoryId: t2.id, reason: 'trajectory not scored' }]);
  });

  it('refuses a mix of levels unless one is chosen', () => {
    const mixed: HumanLabel[] = [{ trajectoryId: t1.id, score: 4 }, { trajectoryId: t1.id, stepIndex: 0, score: 2 }];
    expect(() => pairLabels(mixed, [t1])).toThrow(ConfigError);
    expect(() => pairLabels(mixed, [t1])).toThrow(/1 step-level and 1 trajectory-level/);
    const p = pairLabels(mixed, [t1], { level: 'trajectory' });
    expect(p.pairs).toHaveLength(1);
    expect(p.ignored).toBe(1);
  });
});

describe('fitting a calibration', () => {
  // 60 trajectories, 4 steps each, automatic step scores spread over [0, 1]; human labels on a 1–5
  // scale with human = 1 + 4·sqrt(auto) + uniform noise in ±0.1 (a known monotone relation).
  const rng = new Rng(5);
  const trajectories = Array.from({ length: 60 }, (_, i) => scored(`task-${i}`, [rng.next(), rng.next(), rng.next(), rng.next()]));
  const labels: HumanLabel[] = trajectories.flatMap((t) =>
    t.steps.map((s) => ({ trajectoryId: t.id, stepIndex: s.index, score: 1 + 4 * Math.sqrt(s.reward!.score) + (rng.next() - 0.5) * 0.2 })),
  );

  it('recovers the relation and reports agreement with bootstrap intervals', () => {
    const { calibration, report } = fitCalibration(labels, trajectories, { bootstrap: { resamples: 300, seed: 9 } });
    for (const a of [0.1, 0.25, 0.5, 0.75, 0.9]) expect(Math.abs(calibration.apply(a) - (1 + 4 * Math.sqrt(a)))).toBeLessThan(0.15);
    expect(report.level).toBe('step');
    expect(report.pairs).toBe(240);
    expect(report.unmatched).toBe(0);
    // Order is nearly perfectly preserved; the sqrt bends the linear fit.
    expect(report.raw.spearman.estimate).toBeGreaterThan(0.97);
    expect(report.raw.kendallTauB.estimate).toBeGreaterThan(0.9);
    expect(report.raw.pairwiseAgreement.estimate).toBeGreaterThan(0.95);
    expect(report.raw.pearson.estimate).toBeLessThan(report.calibrated.pearson);
    for (const s of [report.raw.pearson, report.raw.spearman, report.raw.kendallTauB, report.raw.pairwiseAgreement]) {
      expect(s.lo).toBeLessThanOrEqual(s.estimate);
      expect(s.hi).toBeGreaterThanOrEqual(s.estimate);
      expect(s.resamples).toBe(300);
      expect(s.level).toBe(0.95);
    }
    expect(report.calibrated.mae).toBeLessThan(0.1);
    expect(report.calibrated.mae).toBeLessThan(report.baseline.mae);
    // Seeded: the same options give the same report.
    expect(fitCalibration(labels, trajectories, { bootstrap: { resamples: 300, seed: 9 } }).report).toEqual(report);
  });

  it('maps the annotators\' scale onto [0, 1] with labelRange', () => {
    // The noisy labels reach slightly past [1, 5]; declare the scale as [0.8, 5.2]:
    // human' = (human − 0.8)/4.4 = (0.2 + 4·sqrt(auto) + noise)/4.4.
    const { calibration, report } = fitCalibration(labels, trajectories, { labelRange: [0.8, 5.2], bootstrap: { resamples: 20 } });
    for (const a of [0.1, 0.5, 0.9]) expect(Math.abs(calibration.apply(a) - (0.2 + 4 * Math.sqrt(a)) / 4.4)).toBeLessThan(0.04);
    expect(calibration.toJSON().fit).toEqual({ level: 'step', n: 240, labelRange: [0.8, 5.2] });
    expect(report.raw.spearman.estimate).toBeGreaterThan(0.97);
    expect(() => fitCalibration(labels, trajectories, { labelRange: [2, 5] })).toThrow(/outside labelRange \[2, 5\]/);
  });

  it('works from files, and saves and loads the calibration', async () => {
    const labelsPath = join(dir, 'labels.jsonl');
    const scoredPath = join(dir, 'scored.jsonl');
    writeFileSync(labelsPath, labels.map((l) => JSON.stringify(l)).join('\n') + '\n');
    writeFileSync(scoredPath, trajectories.map((t) => JSON.stringify(t)).join('\n') + '\n');
    const { calibration, report } = await fitCalibrationFromFiles(labelsPath, scoredPath, { bootstrap: { resamples: 50 } });
    expect(report.pairs).toBe(240);
    const calPath = join(dir, 'out', 'calibration.json');
    await saveCalibration(calPath, calibration);
    expect(JSON.parse(readFileSync(calPath, 'utf8'))).toMatchObject({ kind: 'isotonic', fit: { level: 'step', n: 240 } });
    const back = await loadCalibration(calPath);
    for (const a of [0, 0.33, 0.5, 1]) expect(back.apply(a)).toBe(calibration.apply(a));
  });

  it('leaves out and names bad trajectory lines, reads the rest, and refuses too few matches', async () => {
    const scoredPath = join(dir, 'bad.jsonl');
    // A BOM, a line that is no trajectory, and one whose id is not its content's.
    const forged = { ...trajectories[2], id: trajectories[1]!.id };
    writeFileSync(scoredPath, `\uFEFF${JSON.stringify(trajectories[0])}\n{"id":1}\n${JSON.stringify(forged)}\n${JSON.stringify(trajectories[1])}\n`);
    const read = await readTrajectoriesFile(scoredPath);
    expect(read.trajectories.map((t) => t.id)).toEqual([trajectories[0]!.id, trajectories[1]!.id]);
    expect(read.errors[0]).toMatch(/bad\.jsonl:2 \$\.schemaVersion: /);
    expect(read.errors.at(-1)).toMatch(/bad\.jsonl:3 \$\.id: does not match the trajectory's content/);
    const labelsPath = join(dir, 'l2.jsonl');
    writeFileSync(labelsPath, `\uFEFF${JSON.stringify(labels[0])}\n`);
    await expect(fitCalibrationFromFiles(labelsPath, scoredPath)).rejects.toThrow(/at least 2 labelled steps.*matched 1 of 1/);
    expect(() => fitCalibration(labels.slice(0, 1), trajectories)).toThrow(/at least 2 labelled steps.*matched 1 of 1/);
  });

  it('says which level to choose when every label is of the other one', () => {
    expect(() => fitCalibration(labels, trajectories, { level: 'trajectory' })).toThrow(/240 step-level label\(s\) were left out at level trajectory \(choose level step\)/);
  });
});

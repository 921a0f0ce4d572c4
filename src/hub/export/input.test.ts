import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SchemaError } from '../../core/errors.js';
import { trajectoryId } from '../../core/trajectory.js';
import { fakeTrajectory } from '../__fixtures__/trajectories.js';
import { readTrajectoryFile } from './input.js';

describe('readTrajectoryFile', () => {
  it('reads valid lines, and names every invalid one: not JSON, not a trajectory, an id that is not its content id', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'gymflow-export-input-'));
    const good = fakeTrajectory();
    const other = fakeTrajectory({ success: false });
    const file = path.join(dir, 'runs.jsonl');
    await writeFile(file, `${JSON.stringify(good)}\n\n${JSON.stringify(other)}\n`);
    expect((await readTrajectoryFile(file)).map((t) => t.id)).toEqual([good.id, other.id]);

    const edited = { ...good, task: { ...good.task, instruction: 'edited by hand' } };
    await writeFile(file, `${JSON.stringify(good)}\n{cut\n${JSON.stringify(edited)}\n${JSON.stringify({ ...other, steps: 'none' })}\n`);
    const err = await readTrajectoryFile(file).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SchemaError);
    const issues = (err as SchemaError).issues;
    expect(issues[0]).toMatch(new RegExp(`^${file}:2 \\$: invalid JSON`));
    expect(issues[1]).toBe(`${file}:3 $.id: does not match the trajectory's content (expected ${trajectoryId(edited)})`);
    expect(issues[2]).toMatch(new RegExp(`^${file}:4 \\$\\.steps: `));
  });
});

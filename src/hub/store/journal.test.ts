import { readFileSync } from 'node:fs';
import { appendFile, mkdtemp, readdir, rm, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeTrajectory, type Trajectory } from '../../core/trajectory.js';
import { storedTrajectory } from './trajectory-set.js';
import { ABANDONED_JOURNAL_MS, EpisodeJournal, journalPath, removeAbandonedJournals, type JournalEntry } from './journal.js';

function trajectory(i: number): Trajectory {
  return makeTrajectory({
    task: { id: `t${i}`, domain: 'generic', instruction: `task ${i}` },
    envId: 'gymflow/test-v0',
    agent: { name: 'expert' },
    steps: [],
    outcome: { success: i % 2 === 0, score: i % 2 === 0 ? 1 : 0, terminated: true, truncated: false, reason: 'submitted' },
    metadata: { collect: { index: i } },
  });
}

describe('EpisodeJournal', () => {
  let root = '';
  beforeEach(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'gymflow-journal-'));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('keeps what one attempt appended (concurrently) for the next attempt of the same key, and nothing for another key', async () => {
    const first = await EpisodeJournal.open(root, 'wf/run/7');
    expect(first.finished.size).toBe(0);
    await Promise.all([3, 0, 5].map((i) => first.append(i, trajectory(i))));
    await first.close();

    const second = await EpisodeJournal.open(root, 'wf/run/7');
    expect([...second.finished.keys()]).toEqual([3, 0, 5]);
    expect(second.finished.get(5)).toEqual(trajectory(5));
    await second.append(1, trajectory(1));
    await second.close();
    expect([...(await EpisodeJournal.open(root, 'wf/run/7')).finished.keys()]).toEqual([3, 0, 5, 1]);
    expect((await EpisodeJournal.open(root, 'wf/run/8')).finished.size).toBe(0);
  });

  it('writes the lines of one turn together, in call order, each append resolving once its line is in the file', async () => {
    const journal = await EpisodeJournal.open(root, 'k');
    const file = journalPath(root, 'k');
    const indexes = (): number[] => readFileSync(file, 'utf8').split('\n').filter((l) => l !== '').map((l) => (JSON.parse(l) as JournalEntry).index);
    const t2 = trajectory(2);
    const appends = [5, 0, 2].map((i) => journal.append(i, i === 2 ? t2 : trajectory(i)));
    // Serialised at once: a change made after the append is not what the journal keeps.
    t2.metadata.changed = true;
    // Nothing written yet: the write comes at the end of this turn of the event loop.
    expect(indexes()).toEqual([]);
    await appends[0];
    expect(indexes()).toEqual([5, 0, 2]);
    await Promise.all(appends);
    // A close writes what is still waiting, and that append resolves.
    const last = journal.append(7, trajectory(7));
    await journal.close();
    await last;
    expect(indexes()).toEqual([5, 0, 2, 7]);
    expect((await EpisodeJournal.open(root, 'k')).finished.get(2)).toEqual(trajectory(2));
  });

  it('keeps an episode appended in its stored form (a collection\'s) as the same trajectory, beside the plain form', async () => {
    const journal = await EpisodeJournal.open(root, 'k');
    const t = trajectory(4);
    await Promise.all([journal.append(4, t, storedTrajectory(t)), journal.append(1, trajectory(1))]);
    await journal.close();
    expect(readFileSync(journalPath(root, 'k'), 'utf8')).toMatch(/^\{"index":4,"id":"sha256:[0-9a-f]{64}","behaviour":\{/);
    const reopened = await EpisodeJournal.open(root, 'k');
    expect([...reopened.finished.keys()]).toEqual([4, 1]);
    expect(reopened.finished.get(4)).toEqual(t);
    // In the schema's key order, as the episode had it.
    expect(JSON.stringify(reopened.finished.get(4))).toBe(JSON.stringify(t));
    await reopened.close();
  });

  it('ignores a last line a crash cut short and a damaged line: those episodes run again', async () => {
    const journal = await EpisodeJournal.open(root, 'k');
    await journal.append(0, trajectory(0));
    await journal.close();
    const file = journalPath(root, 'k');
    await appendFile(file, 'not json\n{"index":"x","trajectory":{}}\n');
    await appendFile(file, JSON.stringify({ index: 2, trajectory: trajectory(2) }).slice(0, 40));
    const reopened = await EpisodeJournal.open(root, 'k');
    expect([...reopened.finished.keys()]).toEqual([0]);
    // The next append starts on a line of its own, after the cut one.
    await reopened.append(4, trajectory(4));
    await reopened.close();
    expect([...(await EpisodeJournal.open(root, 'k')).finished.keys()]).toEqual([0, 4]);
  });

  it('remove deletes the file; an append after close is refused', async () => {
    const journal = await EpisodeJournal.open(root, 'k');
    await journal.append(0, trajectory(0));
    await journal.remove();
    expect(await readdir(path.dirname(journalPath(root, 'k')))).toEqual([]);
    await expect(journal.append(1, trajectory(1))).rejects.toThrow(/is closed/);
  });

  it('removeAbandonedJournals removes only journals untouched for a week', async () => {
    for (const key of ['old', 'new']) await (await EpisodeJournal.open(root, key)).close();
    const weekAgo = (Date.now() - ABANDONED_JOURNAL_MS - 60_000) / 1000;
    await utimes(journalPath(root, 'old'), weekAgo, weekAgo);
    expect(await removeAbandonedJournals(root)).toBe(1);
    expect(await readdir(path.dirname(journalPath(root, 'k')))).toEqual([path.basename(journalPath(root, 'new'))]);
    expect(await removeAbandonedJournals(path.join(root, 'missing'))).toBe(0);
  });
});

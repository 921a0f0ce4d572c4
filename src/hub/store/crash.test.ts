import { spawn } from 'node:child_process';
import { mkdtemp, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ArtifactStore } from './store.js';
import { loadTrajectories } from './trajectory-set.js';

const fixture = fileURLToPath(new URL('./__fixtures__/crash-writer.ts', import.meta.url));

/** Spawns the crash writer, waits for `ready`, SIGKILLs it and waits for it to die. */
async function killMidWrite(root: string, mode: 'stream' | 'set'): Promise<void> {
  const child = spawn(process.execPath, ['--import', 'tsx', fixture, root, mode], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('ready')) resolve();
    });
    child.on('exit', (code) => reject(new Error(`writer exited (${code}) before it was killed: ${stderr}`)));
  });
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
  child.kill('SIGKILL');
  expect(await exited).toBe('SIGKILL');
}

async function tmpFiles(root: string): Promise<string[]> {
  return readdir(path.join(root, 'tmp'));
}

describe('a writer killed mid-write', () => {
  it('leaves no visible partial artifact; the next open removes its temp file', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'gymflow-crash-'));
    await killMidWrite(root, 'stream');
    // The killed writer's temp file is there, holding at least the first chunk.
    expect((await tmpFiles(root)).length).toBe(1);

    const store = await ArtifactStore.open({ root });
    expect(await tmpFiles(root)).toEqual([]);
    expect(await store.list()).toEqual([]);
    expect(await store.listRefs()).toEqual([]);
    const report = await store.verify();
    expect(report.problems).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.objects).toBe(0);
  }, 60_000);

  it('keeps the named set pointing at the last complete set; gc removes the orphaned members', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'gymflow-crash-'));
    await killMidWrite(root, 'set');

    const store = await ArtifactStore.open({ root });
    expect(await tmpFiles(root)).toEqual([]);
    const ref = await store.getRef('rollouts');
    expect(ref).toBeDefined();
    const entry = await store.stat(ref as string);
    expect(entry.meta).toMatchObject({ count: 5 });
    const set = await loadTrajectories(store, ref as string);
    expect(set.map((t) => t.task.id)).toEqual(['task-0', 'task-1', 'task-2', 'task-3', 'task-4']);
    // Only the complete set is an artifact: the interrupted manifest was never published.
    expect((await store.list()).map((e) => e.ref)).toEqual([ref]);
    expect((await store.verify()).ok).toBe(true);

    // The interrupted set's first batch of member objects is durable but unreachable.
    const before = (await store.verify()).objects;
    expect(before).toBeGreaterThan(1 + 5);
    const gc = await store.gc({ graceMs: 0 });
    expect(gc.deletedObjects).toBe(before - 1 - 5);
    const after = await store.verify();
    expect(after.ok).toBe(true);
    expect(after.objects).toBe(1 + 5);
    expect((await loadTrajectories(store, ref as string)).length).toBe(5);
  }, 60_000);
});

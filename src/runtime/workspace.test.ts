import { mkdir, mkdtemp, readdir, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { putTree } from '../hub/store/tree.js';
import { checkoutCached, CHECKOUT_IN_USE_MS, KEEP_CHECKOUTS, openWorkspace, pruneCheckouts, type Workspace } from './workspace.js';

const HOUR = 3_600_000;

describe('the checkouts a host keeps', () => {
  let root: string;
  let checkouts: string;
  const now = Date.parse('2026-11-25T12:00:00Z');

  beforeEach(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'gymflow-checkouts-'));
    checkouts = path.join(root, 'checkouts');
    await mkdir(checkouts);
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  /** A checkout (or another entry) last used `hoursAgo` before `now`. */
  const entry = async (name: string, hoursAgo: number): Promise<void> => {
    const dir = path.join(checkouts, name);
    await mkdir(dir);
    await writeFile(path.join(dir, 'model.safetensors'), name);
    const at = new Date(now - hoursAgo * HOUR);
    await utimes(dir, at, at);
  };
  const hex = (c: string): string => c.repeat(64);

  it('keeps the most recently used and the recently used; removes the rest, stale temp and trash directories', async () => {
    // Used 1, 2, 3 and 4 hours ago (kept: the 3 most recent), 5 and 30 hours ago (removed).
    for (const [c, h] of [['1', 1], ['2', 2], ['3', 3], ['4', 4], ['5', 5], ['6', 30]] as const) await entry(hex(c), h);
    await entry(`${hex('7')}.tmp-123-aa`, 2); // a checkout in progress: kept
    await entry(`${hex('8')}.tmp-123-bb`, 25); // left by a worker that died while copying
    await entry(`${hex('9')}.trash-123-cc`, 0); // a removal that was interrupted
    const report = await pruneCheckouts(checkouts, { keep: 3, inUseMs: HOUR / 2, now });
    expect(report.failed).toEqual([]);
    expect(report.removed.sort()).toEqual([hex('4'), hex('5'), hex('6'), `${hex('8')}.tmp-123-bb`, `${hex('9')}.trash-123-cc`].sort());
    expect((await readdir(checkouts)).sort()).toEqual([hex('1'), hex('2'), hex('3'), `${hex('7')}.tmp-123-aa`].sort());
  });

  it('never removes a checkout used within the in-use window, however many there are', async () => {
    for (const c of ['1', '2', '3']) await entry(hex(c), 0.5);
    expect(await pruneCheckouts(checkouts, { keep: 1, inUseMs: HOUR, now })).toEqual({ removed: [], failed: [] });
    expect(await readdir(checkouts)).toHaveLength(3);
  });

  it('checkoutCached marks a checkout used, so it is the last to go, and checks out a pruned one again', async () => {
    const ws: Workspace = await openWorkspace({ store: path.join(root, 'store'), workDir: root });
    const refs: string[] = [];
    for (let i = 0; i <= KEEP_CHECKOUTS; i++) {
      const src = path.join(root, `model-${i}`);
      await mkdir(src);
      await writeFile(path.join(src, 'config.json'), `{"i": ${i}}`);
      refs.push((await putTree(ws.store, src, { kind: 'checkpoint' })).ref);
    }
    const dirOf = (ref: string): string => path.join(checkouts, ref.slice('sha256:'.length));
    const longAgo = new Date(Date.now() - 2 * CHECKOUT_IN_USE_MS);
    // KEEP_CHECKOUTS checkouts, last used long ago in order (the first one earliest); the first one is then used again now.
    for (const [i, ref] of refs.slice(0, KEEP_CHECKOUTS).entries()) {
      await checkoutCached(ws, ref);
      const at = new Date(longAgo.getTime() + i * 60_000);
      await utimes(dirOf(ref), at, at);
    }
    const first = refs[0] as string;
    expect(await checkoutCached(ws, first)).toBe(dirOf(first));
    expect((await stat(dirOf(first))).mtimeMs).toBeGreaterThan(longAgo.getTime() + CHECKOUT_IN_USE_MS);
    // One more checkout: the least recently used one goes (the second), not the first.
    await checkoutCached(ws, refs[KEEP_CHECKOUTS] as string);
    const left = await readdir(checkouts);
    expect(left).toHaveLength(KEEP_CHECKOUTS);
    expect(left).not.toContain(path.basename(dirOf(refs[1] as string)));
    expect(left).toContain(path.basename(dirOf(first)));
    // Needed again: checked out again from the store.
    const again = await checkoutCached(ws, refs[1] as string);
    expect(await readdir(again)).toEqual(['config.json']);
  });
});

import { access, chmod, mkdir, mkdtemp, open, readdir, readFile, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { sha256Ref } from '../../core/canonical.js';
import { StoreError } from '../errors.js';
import { TREE_FORMAT } from './manifests.js';
import { eachBackend } from './__fixtures__/backends.js';
import { objectPath } from './layout.js';
import { hashFile } from './stream.js';
import { checkoutTree, putTree, readTree } from './tree.js';

/** Size of the "checkpoint shard" in the memory test; raise it (`GYMFLOW_TEST_BIG_FILE_MB=2048`) to try GB files. */
const BIG_MB = Number(process.env.GYMFLOW_TEST_BIG_FILE_MB ?? 64);
const BIG = BIG_MB * 1024 * 1024;

async function tmp(prefix: string): Promise<string> {
  return mkdtemp(path.join(tmpdir(), `gymflow-${prefix}-`));
}

async function exists(p: string): Promise<boolean> {
  return access(p).then(
    () => true,
    () => false,
  );
}

/** A sparse file of `size` bytes with a few distinct markers, so its content is not all zeros. */
async function bigFile(file: string, size: number): Promise<void> {
  await writeFile(file, '');
  await truncate(file, size);
  const fh = await open(file, 'r+');
  try {
    for (const at of [0, Math.floor(size / 3), size - 16]) await fh.write(Buffer.from(`marker@${at}`.padEnd(16, '.')), 0, 16, at);
  } finally {
    await fh.close();
  }
}

/** Runs `fn` while sampling RSS every millisecond; returns the peak growth over the RSS before it. */
async function peakRssGrowth(fn: () => Promise<void>): Promise<number> {
  const base = process.memoryUsage.rss();
  let peak = base;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, 1);
  try {
    await fn();
  } finally {
    clearInterval(timer);
  }
  return Math.max(peak, process.memoryUsage.rss()) - base;
}

eachBackend('file trees', (backend) => {
  describe('of large files', () => {
    it(`streams a ${BIG_MB} MiB file in and out with memory far below its size, byte for byte`, async () => {
      const store = await backend.open();
      const dir = await tmp('tree-big');
      await mkdir(path.join(dir, 'shards'));
      await bigFile(path.join(dir, 'shards', 'model-00001.safetensors'), BIG);
      await writeFile(path.join(dir, 'config.json'), '{"hidden":8}\n');
      // Warm the code paths (module loading, JIT, first buffers) so they do not count as growth.
      const warm = await tmp('tree-warm');
      await writeFile(path.join(warm, 'a'), 'a');
      await checkoutTree(store, (await putTree(store, warm, { kind: 'checkpoint' })).ref, path.join(await tmp('tree-co'), 'warm'));

      const out = path.join(await tmp('tree-co'), 'ckpt');
      let ref = '';
      const growth = await peakRssGrowth(async () => {
        ref = (await putTree(store, dir, { kind: 'checkpoint', name: 'ckpt/big' })).ref;
        await checkoutTree(store, ref, out);
      });
      // Reading the file whole (the old readFile/get path) grows RSS by at least its size; streaming
      // holds a few 1 MiB buffers. Half its size leaves room for the s3 backend's HTTP buffers and a collector that
      // runs late on a busy machine (16.4 MiB measured through SeaweedFS with one core held by another process).
      expect(growth).toBeLessThan(BIG / 2);

      const manifest = await readTree(store, ref);
      expect(manifest.files).toEqual([
        { path: 'config.json', object: sha256Ref('{"hidden":8}\n'), size: 13 },
        { path: 'shards/model-00001.safetensors', object: (await hashFile(path.join(dir, 'shards', 'model-00001.safetensors'))).ref, size: BIG },
      ]);
      expect((await store.stat(ref)).meta).toEqual({ files: 2, bytes: BIG + 13 });
      const copy = await hashFile(path.join(out, 'shards', 'model-00001.safetensors'));
      expect(copy).toEqual({ ref: manifest.files[1]?.object, size: BIG });
      expect(await readFile(path.join(out, 'config.json'), 'utf8')).toBe('{"hidden":8}\n');
      // A checkout is the caller's: writable, unlike the read-only objects.
      await writeFile(path.join(out, 'config.json'), '{}');
      expect(await readdir(path.join(store.root, 'tmp'))).toEqual([]);
      expect((await store.verify()).ok).toBe(true);
    }, Math.max(120_000, BIG_MB * 500));

    it('putFile and openObjectStream stream a large single file', async () => {
      const store = await backend.open();
      const file = path.join(await tmp('file-big'), 'rollouts.jsonl');
      await bigFile(file, 8 * 1024 * 1024 + 5);
      const entry = await store.putFile(file, { kind: 'trajectories' });
      expect(entry).toMatchObject({ size: 8 * 1024 * 1024 + 5, format: 'bytes' });
      expect(entry.ref).toBe((await hashFile(file)).ref);
      let n = 0;
      for await (const chunk of await store.openObjectStream(entry.ref)) n += (chunk as Buffer).byteLength;
      expect(n).toBe(entry.size);
      await expect(store.openObjectStream(`sha256:${'0'.repeat(64)}`)).rejects.toThrow(/is not in store/);
      await expect(store.putFile(`${file}.missing`, { kind: 'blob' })).rejects.toThrow(/cannot store .*rollouts\.jsonl\.missing: no such file/);
    });
  });

  describe('small and many', () => {
    it('stores identical files once, also across puts, and round-trips empty files and nested paths', async () => {
      const store = await backend.open();
      const dir = await tmp('tree-dedup');
      await mkdir(path.join(dir, 'a', 'b'), { recursive: true });
      const same = 'x'.repeat(3 * 1024 * 1024 + 7); // more than one chunk
      await writeFile(path.join(dir, 'one.bin'), same);
      await writeFile(path.join(dir, 'a', 'b', 'two.bin'), same);
      await writeFile(path.join(dir, 'a', 'empty'), '');
      const first = await putTree(store, dir, { kind: 'checkpoint' });
      const manifest = await readTree(store, first.ref);
      expect(manifest.files.map((f) => f.path)).toEqual(['a/b/two.bin', 'a/empty', 'one.bin']);
      expect(manifest.files[0]?.object).toBe(sha256Ref(same));
      expect(manifest.files[2]?.object).toBe(manifest.files[0]?.object);
      // Objects: the shared file, the empty file, the manifest.
      expect((await store.verify()).objects).toBe(3);

      const again = await putTree(store, dir, { kind: 'checkpoint' });
      expect(again.ref).toBe(first.ref);
      expect((await store.verify()).objects).toBe(3);
      expect(await readdir(path.join(store.root, 'tmp'))).toEqual([]);

      const out = path.join(await tmp('tree-co'), 'copy');
      await checkoutTree(store, first.ref, out);
      expect(await readFile(path.join(out, 'a', 'b', 'two.bin'), 'utf8')).toBe(same);
      expect(await readFile(path.join(out, 'one.bin'), 'utf8')).toBe(same);
      expect(await readFile(path.join(out, 'a', 'empty'), 'utf8')).toBe('');
      await expect(checkoutTree(store, first.ref, path.join(out, 'a'))).rejects.toThrow();
    });

    it('a failed checkout leaves neither dest nor its temp directory', async () => {
      const store = await backend.open();
      const dir = await tmp('tree-fail');
      for (let i = 0; i < 6; i++) await writeFile(path.join(dir, `f${i}`), `file ${i}\n`);
      const entry = await putTree(store, dir, { kind: 'checkpoint' });
      const manifest = await readTree(store, entry.ref);
      // A member object gone (a store damaged by hand): the checkout fails after copying others.
      const victim = manifest.files[4]?.object as string;
      await backend.rawDelete(store, path.relative('/', objectPath('/', victim)));
      const parent = await tmp('tree-co');
      const out = path.join(parent, 'ckpt');
      const err = await checkoutTree(store, entry.ref, out).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(StoreError);
      expect((err as Error).message).toContain(`object ${victim} is not in store`);
      expect(await exists(out)).toBe(false);
      expect(await readdir(parent)).toEqual([]);

      // A manifest whose path escapes the tree is refused before anything is written.
      const evil = await store.putJson(
        { format: TREE_FORMAT, version: 1, files: [{ path: '../../escaped', object: manifest.files[0]?.object, size: 7 }] },
        { kind: 'checkpoint', format: 'tree' },
      );
      await expect(checkoutTree(store, evil.ref, out)).rejects.toThrow(/\$\.files\[0\]\.path: '\.\.\/\.\.\/escaped' escapes the tree/);
      expect(await readdir(parent)).toEqual([]);
      expect(await exists(path.join(parent, '..', 'escaped'))).toBe(false);
    });

    // It tampers with the object's local file, which is the object only in a directory store (maintenance.test.ts
    // corrupts a bucket's object).
    if (backend.name === 'directory') it('verify catches a corrupted member object; checkout catches a truncated one', async () => {
      const store = await backend.open();
      const dir = await tmp('tree-corrupt');
      await bigFile(path.join(dir, 'weights.bin'), 2 * 1024 * 1024 + 3);
      await writeFile(path.join(dir, 'tokenizer.json'), '{"vocab":{}}');
      const entry = await putTree(store, dir, { kind: 'checkpoint', name: 'ckpt' });
      const manifest = await readTree(store, entry.ref);
      const weights = manifest.files.find((f) => f.path === 'weights.bin')?.object as string;
      expect((await store.verify()).ok).toBe(true);

      // Flip one byte deep inside (past the first chunk): same size, different content.
      const file = store.objectFile(weights);
      await chmod(file, 0o644);
      const fh = await open(file, 'r+');
      await fh.write(Buffer.from([0xff]), 0, 1, 1024 * 1024 + 100);
      await fh.close();
      const report = await store.verify();
      expect(report.ok).toBe(false);
      expect(report.problems).toEqual([expect.objectContaining({ code: 'corrupt-object', ref: weights })]);

      await truncate(file, 1000);
      const parent = await tmp('tree-co');
      await expect(checkoutTree(store, entry.ref, path.join(parent, 'ckpt'))).rejects.toThrow(new RegExp(`object ${weights} .* has 1000 bytes, expected ${2 * 1024 * 1024 + 3}`));
      expect(await readdir(parent)).toEqual([]);
    });

    it('stores a directory and checks it out again', async () => {
      const store = await backend.open();
      const dir = await mkdtemp(path.join(tmpdir(), 'gymflow-tree-'));
      await mkdir(path.join(dir, 'data'));
      await writeFile(path.join(dir, 'README.md'), '# card\n');
      await writeFile(path.join(dir, 'data', 'train-00000-of-00001.jsonl'), '{"a":1}\n');
      const entry = await putTree(store, dir, { kind: 'dataset', name: 'hf' });
      expect(entry.format).toBe('tree');
      expect((await readTree(store, entry.ref)).files.map((f) => f.path)).toEqual(['README.md', 'data/train-00000-of-00001.jsonl']);
      const out = path.join(await mkdtemp(path.join(tmpdir(), 'gymflow-co-')), 'copy');
      await checkoutTree(store, entry.ref, out);
      expect(await readFile(path.join(out, 'data', 'train-00000-of-00001.jsonl'), 'utf8')).toBe('{"a":1}\n');
      expect((await store.gc({ graceMs: 0 })).deletedObjects).toBe(0);
      expect((await store.verify()).ok).toBe(true);
    });
  });
});

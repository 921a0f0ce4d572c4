/**
 * The store's test suites run against both backends (docs/store.md): `eachBackend` declares a suite once per
 * backend — the directory, and `s3://` on a real SeaweedFS started for the file (skipped loudly, and failed by CI,
 * when the `weed` binary is absent; tests/support/requires.ts). Tests that tamper with what a store holds do it
 * through {@link BackendUnderTest.rawWrite}/{@link BackendUnderTest.rawDelete}, which reach under the API of either.
 */
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, mkdtemp, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe } from 'vitest';
import { requires } from '../../../../tests/support/requires.js';
import { startSeaweed, type Seaweed } from '../../../../tests/support/seaweedfs.js';
import { isErrno } from '../../../core/fs.js';
import type { S3Backend } from '../s3-backend.js';
import { ArtifactStore } from '../store.js';

/** One backend the suites run against. */
export interface BackendUnderTest {
  name: 'directory' | 's3';
  /** A fresh, empty store (an `s3://` one: a new prefix, with its own cache directory unless `cacheDir`). */
  open(options?: { cacheDir?: string }): Promise<ArtifactStore>;
  /** Another handle on the same store as `store` (an `s3://` one: with a fresh cache, as on another host). */
  reopen(store: ArtifactStore, options?: { cacheDir?: string }): Promise<ArtifactStore>;
  /** Writes raw bytes at a store-relative key (`objects/ab/…`, `refs/name`), bypassing the store's API. */
  rawWrite(store: ArtifactStore, key: string, data: string): Promise<void>;
  /** Deletes a store-relative key (an object also from an `s3://` store's cache), bypassing the store's API. */
  rawDelete(store: ArtifactStore, key: string): Promise<void>;
}

const directory: BackendUnderTest = {
  name: 'directory',
  open: async () => ArtifactStore.open({ root: await mkdtemp(path.join(tmpdir(), 'gymflow-store-')) }),
  reopen: async (store) => ArtifactStore.open({ root: store.root }),
  rawWrite: async (store, key, data) => {
    const file = path.join(store.root, key);
    await mkdir(path.dirname(file), { recursive: true });
    await chmod(file, 0o644).catch(() => undefined);
    await writeFile(file, data);
  },
  rawDelete: async (store, key) => {
    await unlink(path.join(store.root, key));
  },
};

let seaweed: Seaweed | undefined;
const BUCKET = 'gymflow-test';

const s3: BackendUnderTest = {
  name: 's3',
  open: async (options = {}) => openS3(`s3://${BUCKET}/t-${randomBytes(6).toString('hex')}`, options.cacheDir),
  reopen: async (store, options = {}) => openS3(store.location, options.cacheDir),
  rawWrite: async (store, key, data) => {
    await (store.backend as S3Backend).bucket.putBytes(key, data);
  },
  rawDelete: async (store, key) => {
    await (store.backend as S3Backend).bucket.delete([key]);
    if (key.startsWith('objects/')) {
      await unlink(path.join(store.root, key)).catch((err: unknown) => {
        if (!isErrno(err, 'ENOENT')) throw err;
      });
    }
  },
};

async function openS3(url: string, cacheDir: string | undefined): Promise<ArtifactStore> {
  if (seaweed === undefined) throw new Error('SeaweedFS is not running (eachBackend starts it)');
  return ArtifactStore.open({ root: url, cacheDir: cacheDir ?? (await mkdtemp(path.join(tmpdir(), 'gymflow-cache-'))), env: seaweed.env });
}

/** The running SeaweedFS of this file's `s3` suites (for tests that restart it). */
export function runningSeaweed(): Seaweed {
  if (seaweed === undefined) throw new Error('SeaweedFS is not running (eachBackend starts it)');
  return seaweed;
}

/**
 * Declares `suite` once per backend: `<name> [directory]`, and `<name> [s3]` against a SeaweedFS this file starts
 * once (tagged `[requires:seaweedfs]`, skipped loudly without the binary).
 */
export function eachBackend(name: string, suite: (backend: BackendUnderTest) => void): void {
  describe(`${name} [directory]`, () => suite(directory));
  requires.seaweedfs().describe(`${name} [s3]`, () => {
    beforeAll(async () => {
      seaweed ??= await startSeaweed();
    });
    afterAll(async () => {
      await seaweed?.stop();
      seaweed = undefined;
    });
    suite(s3);
  });
}

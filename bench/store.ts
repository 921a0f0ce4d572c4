/**
 * Put/get throughput and latency of the artifact store's S3 backend (on a real SeaweedFS, started here on 127.0.0.1)
 * against its directory backend (docs/store.md, "S3 backend"), for
 * - small objects: trajectories, one artifact each (`putJson`: object + index entry), N of them, one at a time, so
 *   latency is per call; then the same N as one trajectory set (`putTrajectories`: N member objects + a manifest);
 * - a large object: a checkpoint file of LARGE_MB MiB (≥ 100 MB, random bytes) through `putFile`.
 * A get reads the bytes back through a second handle: for `s3`, a cold get is through a fresh cache directory (a
 * worker on another host: the object is downloaded and checked against its hash), a warm get is the same handle
 * again (served from its cache). For the directory there is no cache: cold and warm read the same file.
 * Prints a table and writes `bench/results/store.json`.
 *
 * Usage: `npm run bench:store` (`-- --small 500 --large-mb 256 --repeats 3`). Needs `weed` (scripts/build-seaweedfs.sh).
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, open, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fakeTrajectory } from '../src/hub/__fixtures__/trajectories.js';
import { ArtifactStore } from '../src/hub/store/store.js';
import { loadTrajectories, putTrajectories } from '../src/hub/store/trajectory-set.js';
import { formatTable } from '../src/cli/table.js';
import { startSeaweed, type Seaweed } from '../tests/support/seaweedfs.js';
import { median, runBench, writeReport } from './report.js';

function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const v = i < 0 ? undefined : Number(process.argv[i + 1]);
  if (v !== undefined && !(Number.isFinite(v) && v > 0)) throw new Error(`--${name} expects a positive number, got '${process.argv[i + 1] ?? ''}'`);
  return v ?? fallback;
}

const SMALL = flag('small', 300);
const LARGE_MB = flag('large-mb', 128);
const REPEATS = flag('repeats', 3);

interface Row {
  backend: string;
  case: string;
  n: number;
  bytes: number;
  putPerS: number;
  putMBs: number;
  putP50ms: number;
  putP95ms: number;
  coldGetPerS: number;
  coldGetMBs: number;
  warmGetMBs: number;
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] as number;
}

async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const t0 = process.hrtime.bigint();
  const r = await fn();
  return [r, Number(process.hrtime.bigint() - t0) / 1e6];
}

async function readAll(store: ArtifactStore, ref: string): Promise<number> {
  let n = 0;
  for await (const chunk of await store.openObjectStream(ref)) n += (chunk as Buffer).byteLength;
  return n;
}

type Opener = (cache?: string) => Promise<{ store: ArtifactStore; reopen: (cache: string) => Promise<ArtifactStore> }>;

async function small(backend: string, openStore: Opener, scratch: string): Promise<Row[]> {
  const { store, reopen } = await openStore();
  const trajectories = Array.from({ length: SMALL }, (_, i) => fakeTrajectory({ task: `task-${i}` }));
  const bytes = trajectories.reduce((a, t) => a + Buffer.byteLength(JSON.stringify(t)), 0);
  const lat: number[] = [];
  const refs: string[] = [];
  const [, putMs] = await timed(async () => {
    for (const t of trajectories) {
      const [e, ms] = await timed(() => store.putJson(t, { kind: 'trajectory' }));
      lat.push(ms);
      refs.push(e.ref);
    }
  });
  const cold = await reopen(await mkdtemp(path.join(scratch, 'cache-')));
  const [, coldMs] = await timed(async () => {
    for (const r of refs) await cold.get(r);
  });
  const [, warmMs] = await timed(async () => {
    for (const r of refs) await cold.get(r);
  });
  const rows: Row[] = [
    {
      backend,
      case: `${SMALL} trajectories, one artifact each`,
      n: SMALL,
      bytes,
      putPerS: SMALL / (putMs / 1000),
      putMBs: bytes / 1e6 / (putMs / 1000),
      putP50ms: pct(lat, 50),
      putP95ms: pct(lat, 95),
      coldGetPerS: SMALL / (coldMs / 1000),
      coldGetMBs: bytes / 1e6 / (coldMs / 1000),
      warmGetMBs: bytes / 1e6 / (warmMs / 1000),
    },
  ];
  // The same trajectories as one set (what collect stores): member objects in parallel, then the manifest.
  const distinct = trajectories.map((t) => ({ ...t, task: { ...t.task, id: `${t.task.id}-set` } }));
  const [set, setMs] = await timed(() => putTrajectories(store, distinct, { name: 'bench/set' }));
  const other = await reopen(await mkdtemp(path.join(scratch, 'cache-')));
  const [, setColdMs] = await timed(() => loadTrajectories(other, set.ref));
  const [, setWarmMs] = await timed(() => loadTrajectories(other, set.ref));
  rows.push({
    backend,
    case: `${SMALL} trajectories as one set`,
    n: SMALL,
    bytes,
    putPerS: SMALL / (setMs / 1000),
    putMBs: bytes / 1e6 / (setMs / 1000),
    putP50ms: setMs,
    putP95ms: setMs,
    coldGetPerS: SMALL / (setColdMs / 1000),
    coldGetMBs: bytes / 1e6 / (setColdMs / 1000),
    warmGetMBs: bytes / 1e6 / (setWarmMs / 1000),
  });
  for (const s of [store, cold, other]) s.close();
  return rows;
}

async function large(backend: string, openStore: Opener, scratch: string, file: string, size: number): Promise<Row> {
  const put: number[] = [];
  const coldGet: number[] = [];
  const warmGet: number[] = [];
  for (let i = 0; i < REPEATS; i++) {
    // A fresh store each time, so every put uploads (no deduplication against the last repeat).
    const { store, reopen } = await openStore();
    const [entry, putMs] = await timed(() => store.putFile(file, { kind: 'checkpoint' }));
    put.push(putMs);
    const reader = await reopen(await mkdtemp(path.join(scratch, 'cache-')));
    const [n, coldMs] = await timed(() => readAll(reader, entry.ref));
    if (n !== size) throw new Error(`read ${n} bytes of ${size}`);
    coldGet.push(coldMs);
    warmGet.push((await timed(() => readAll(reader, entry.ref)))[1]);
    store.close();
    reader.close();
  }
  const mb = size / 1e6;
  return {
    backend,
    case: `checkpoint file ${Math.round(size / 1024 / 1024)} MiB (median of ${REPEATS})`,
    n: 1,
    bytes: size,
    putPerS: 1000 / median(put),
    putMBs: mb / (median(put) / 1000),
    putP50ms: median(put),
    putP95ms: Math.max(...put),
    coldGetPerS: 1000 / median(coldGet),
    coldGetMBs: mb / (median(coldGet) / 1000),
    warmGetMBs: mb / (median(warmGet) / 1000),
  };
}

async function main(): Promise<void> {
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'gymflow-bench-store-'));
  let seaweed: Seaweed | undefined;
  try {
    const file = path.join(scratch, 'model.safetensors');
    const size = LARGE_MB * 1024 * 1024;
    const fh = await open(file, 'w');
    for (let off = 0; off < size; off += 8 * 1024 * 1024) await fh.write(randomBytes(Math.min(8 * 1024 * 1024, size - off)));
    await fh.close();
    seaweed = await startSeaweed();
    const env = seaweed.env;
    const dirOpener: Opener = async () => {
      const root = await mkdtemp(path.join(scratch, 'dir-'));
      return { store: await ArtifactStore.open({ root }), reopen: () => ArtifactStore.open({ root }) };
    };
    const s3Opener: Opener = async () => {
      const url = `s3://gymflow-bench/run-${randomBytes(4).toString('hex')}`;
      const store = await ArtifactStore.open({ root: url, cacheDir: await mkdtemp(path.join(scratch, 'cache-')), env });
      return { store, reopen: (cache) => ArtifactStore.open({ root: url, cacheDir: cache, env }) };
    };
    const rows: Row[] = [];
    for (const [name, opener] of [['directory', dirOpener], ['s3 (SeaweedFS)', s3Opener]] as const) {
      rows.push(...(await small(name, opener, scratch)));
      rows.push(await large(name, opener, scratch, file, size));
    }
    const f = (x: number, d = 1): string => x.toFixed(d);
    console.log(
      formatTable(
        rows.map((r) => ({
          backend: r.backend,
          case: r.case,
          put: r.n > 1 ? `${f(r.putPerS, 0)}/s` : `${f(r.putMBs)} MB/s`,
          latency: r.case.includes('one artifact') ? `${f(r.putP50ms)} / ${f(r.putP95ms)} ms` : `${f(r.putP50ms, 0)} ms`,
          cold: r.n > 1 ? `${f(r.coldGetPerS, 0)}/s` : `${f(r.coldGetMBs)} MB/s`,
          warm: `${f(r.warmGetMBs)} MB/s`,
        })),
        [
          { key: 'backend' },
          { key: 'case' },
          { key: 'put', align: 'right' },
          { key: 'latency', header: 'put p50 / p95 (or total)', align: 'right' },
          { key: 'cold', header: 'cold get', align: 'right' },
          { key: 'warm', header: 'warm get', align: 'right' },
        ],
      ),
    );
    await writeReport('store', { small: SMALL, largeMiB: LARGE_MB, repeats: REPEATS, endpoint: 'SeaweedFS weed server -s3 on 127.0.0.1', rows });
  } finally {
    await seaweed?.stop();
    await rm(scratch, { recursive: true, force: true });
  }
}

runBench(main);

/**
 * A real SeaweedFS S3 endpoint for the S3 store backend's tests and bench (docs/store.md, "S3 backend"): `weed server`
 * with a master, a volume server, a filer and the S3 gateway, all on free ports of 127.0.0.1, its data in a temp
 * directory, one access key. The binary is the one `scripts/build-seaweedfs.sh` caches (`$GYMFLOW_WEED` overrides).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { isExecutable } from '../../src/core/fs.js';
import { PACKAGE_ROOT } from '../../src/core/package-root.js';
import { freePort } from '../../src/runtime/dev-server.js';

/** The `weed` binary: `$GYMFLOW_WEED`, else the path `scripts/build-seaweedfs.sh --path` names; `undefined` when it is not there. */
export function weedBinary(): string | undefined {
  const fromEnv = process.env['GYMFLOW_WEED'];
  const candidate = fromEnv || spawnSync('bash', [path.join(PACKAGE_ROOT, 'scripts', 'build-seaweedfs.sh'), '--path'], { encoding: 'utf8' }).stdout.trim();
  if (!candidate) return undefined;
  return isExecutable(candidate) ? candidate : undefined;
}

/** A running SeaweedFS with its S3 gateway. */
export interface Seaweed {
  /** `http://127.0.0.1:<port>`. */
  endpoint: string;
  accessKey: string;
  secretKey: string;
  /** The environment that points the store's S3 backend at it (GYMFLOW_S3_ENDPOINT and the credentials). */
  env: NodeJS.ProcessEnv;
  /** Stops the server (SIGTERM, then SIGKILL) and removes its data unless `keepData`. */
  stop(options?: { keepData?: boolean }): Promise<void>;
  /** Stops and starts it again on the same ports and data (an object store restart). */
  restart(): Promise<void>;
}

/** Starts SeaweedFS (`weed server -filer -s3`) and waits until its S3 gateway answers an authenticated request. */
export async function startSeaweed(options: { weed?: string; timeoutMs?: number } = {}): Promise<Seaweed> {
  const weed = options.weed ?? weedBinary();
  if (weed === undefined) throw new Error('no weed binary: run `bash scripts/build-seaweedfs.sh` (or set $GYMFLOW_WEED)');
  const dir = await mkdtemp(path.join(tmpdir(), 'gymflow-seaweed-'));
  const data = path.join(dir, 'data');
  await mkdir(data);
  const ports: number[] = [];
  while (ports.length < 8) {
    const p = await freePort();
    if (!ports.includes(p)) ports.push(p);
  }
  const [master, masterGrpc, volume, volumeGrpc, filer, filerGrpc, s3, s3Grpc] = ports as [number, number, number, number, number, number, number, number];
  const accessKey = 'gymflow-test';
  const secretKey = `secret-${Math.random().toString(36).slice(2)}`;
  const config = path.join(dir, 's3.json');
  await writeFile(
    config,
    JSON.stringify({ identities: [{ name: 'gymflow', credentials: [{ accessKey, secretKey }], actions: ['Admin', 'Read', 'Write', 'List', 'Tagging'] }] }),
  );
  const args = [
    'server',
    '-ip=127.0.0.1',
    '-ip.bind=127.0.0.1',
    `-dir=${data}`,
    `-master.port=${master}`,
    `-master.port.grpc=${masterGrpc}`,
    '-master.telemetry=false',
    '-master.volumeSizeLimitMB=1024',
    `-volume.port=${volume}`,
    `-volume.port.grpc=${volumeGrpc}`,
    '-volume.max=0',
    '-filer',
    `-filer.port=${filer}`,
    `-filer.port.grpc=${filerGrpc}`,
    `-filer.localSocket=${path.join(dir, 'filer.sock')}`,
    '-s3',
    `-s3.port=${s3}`,
    `-s3.port.grpc=${s3Grpc}`,
    '-s3.port.iceberg=0',
    '-s3.port.lance=0',
    `-s3.localSocket=${path.join(dir, 's3.sock')}`,
    `-s3.config=${config}`,
  ];
  const endpoint = `http://127.0.0.1:${s3}`;
  const logFile = path.join(dir, 'weed.log');
  let child: ChildProcess | undefined;
  let log = '';
  // Loaded here, not at the top: requires.ts imports this file for `weedBinary`, and the SDK warns on Node < 22.
  const { ListBucketsCommand, S3Client } = await import('@aws-sdk/client-s3');
  const launch = async (): Promise<void> => {
    child = spawn(weed, args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    const keep = (d: Buffer): void => {
      log = (log + d.toString()).slice(-20_000);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    const client = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: accessKey, secretAccessKey: secretKey }, maxAttempts: 1 });
    const deadline = Date.now() + (options.timeoutMs ?? 120_000);
    try {
      for (;;) {
        if (child.exitCode !== null) throw new Error(`weed exited with ${child.exitCode} before its S3 gateway answered:\n${log.slice(-4000)}`);
        try {
          await client.send(new ListBucketsCommand({}));
          return;
        } catch (err) {
          if (Date.now() > deadline) throw new Error(`weed's S3 gateway at ${endpoint} did not answer within ${options.timeoutMs ?? 120_000} ms (${(err as Error).message}):\n${log.slice(-4000)}`);
          await new Promise((r) => setTimeout(r, 250));
        }
      }
    } finally {
      client.destroy();
    }
  };
  const halt = async (): Promise<void> => {
    const c = child;
    if (c === undefined || c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise<void>((r) => c.once('exit', () => r()));
    c.kill('SIGTERM');
    const timer = setTimeout(() => c.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };
  try {
    await launch();
  } catch (err) {
    await halt();
    await writeFile(logFile, log).catch(() => undefined);
    throw err;
  }
  return {
    endpoint,
    accessKey,
    secretKey,
    env: { GYMFLOW_S3_ENDPOINT: endpoint, GYMFLOW_S3_ACCESS_KEY: accessKey, GYMFLOW_S3_SECRET_KEY: secretKey },
    async stop(o = {}) {
      await halt();
      if (!o.keepData) await rm(dir, { recursive: true, force: true });
    },
    async restart() {
      await halt();
      await launch();
    },
  };
}

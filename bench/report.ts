import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where benchmark reports go (gitignored). */
export const RESULTS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'results');

/** The facts of the machine a number was measured on; every report carries them so runs compare. */
export function machineFacts(): Record<string, unknown> {
  return {
    date: new Date().toISOString(),
    node: process.version,
    cpu: os.cpus()[0]?.model ?? 'unknown',
    cores: os.cpus().length,
    loadavg: os.loadavg().map((x) => Number(x.toFixed(2))),
  };
}

/** Writes `bench/results/<name>.json` (machine facts first, then `fields`) and says where. */
export async function writeReport(name: string, fields: Record<string, unknown>): Promise<string> {
  const out = path.join(RESULTS_DIR, `${name}.json`);
  await mkdir(RESULTS_DIR, { recursive: true });
  await writeFile(out, `${JSON.stringify({ bench: name, ...machineFacts(), ...fields }, null, 2)}\n`);
  console.log(`\nwrote ${path.relative(process.cwd(), out)}`);
  return out;
}

/** The median of samples (the mean of the middle two for an even count). */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

/** Runs a benchmark's `main`, printing the error and exiting non-zero if it fails. */
export function runBench(main: () => Promise<void>): void {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}

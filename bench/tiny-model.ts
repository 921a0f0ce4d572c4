/**
 * Tiny models for the benchmarks, built by the Python trainer in the project's `.venv` (or
 * `GYMFLOW_PYTHON`): `python -m gymflow_trainer.tiny` writes an untrained checkpoint from a
 * `TinyModelConfig`, `export-onnx` turns it into a directory that `local:DIR` runs.
 */
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { PACKAGE_ROOT } from '../src/core/package-root.js';

const run = promisify(execFile);
const ROOT = PACKAGE_ROOT;

/** The trainer's Python interpreter. */
export const PYTHON = process.env['GYMFLOW_PYTHON'] ?? path.join(ROOT, '.venv', 'bin', 'python');

/** Runs the trainer's Python with `args` (from the repository root); resolves to its stdout. */
export async function python(args: string[]): Promise<string> {
  try {
    const { stdout } = await run(PYTHON, args, { cwd: ROOT, maxBuffer: 64 << 20, env: { ...process.env, PYTHONUNBUFFERED: '1' } });
    return stdout;
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`${PYTHON} ${args.slice(0, 3).join(' ')} failed: ${e.message}\n${(e.stderr ?? '').slice(-3000)}`);
  }
}

/** Builds an untrained tiny model from `tiny` (a `TinyModelConfig` object) and its ONNX export under `dir`. */
export async function buildTinyModel(dir: string, tiny: Record<string, unknown>): Promise<{ checkpoint: string; onnx: string }> {
  const checkpoint = path.join(dir, 'checkpoint');
  const onnx = path.join(dir, 'onnx');
  await writeFile(path.join(dir, 'tiny.json'), JSON.stringify(tiny));
  await python(['-m', 'gymflow_trainer.tiny', checkpoint, '--config', path.join(dir, 'tiny.json')]);
  await writeFile(path.join(dir, 'export.json'), JSON.stringify({ checkpoint, output_dir: onnx }));
  await python(['-m', 'gymflow_trainer', 'export-onnx', '--config', path.join(dir, 'export.json')]);
  return { checkpoint, onnx };
}

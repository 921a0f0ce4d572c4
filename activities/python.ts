/**
 * The trainer's Python interpreter and small one-shot Python calls of the GPU activities (checking trainer
 * configurations, building a tiny initial model).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { PACKAGE_ROOT } from '../src/core/package-root.js';

/** `$GYMFLOW_PYTHON`, else `<repo>/.venv/bin/python`, else `python3` on PATH. */
export function trainerPython(env: Record<string, string | undefined> = process.env): string {
  const fromEnv = env['GYMFLOW_PYTHON'];
  if (fromEnv) return fromEnv;
  const venv = path.join(PACKAGE_ROOT, '.venv', 'bin', 'python');
  return existsSync(venv) ? venv : 'python3';
}

/** The trainer package's directory, put on PYTHONPATH so `-m gymflow_trainer` works from any cwd. */
export function trainerEnv(env: Record<string, string | undefined> = process.env): Record<string, string> {
  const trainerDir = path.join(PACKAGE_ROOT, 'trainer');
  const pythonPath = env['PYTHONPATH'] ? `${trainerDir}${path.delimiter}${env['PYTHONPATH']}` : trainerDir;
  return { PYTHONPATH: pythonPath };
}

/** Runs `python -c script args…`; resolves with exit code, stdout and stderr. Aborting kills it. */
export function runPython(script: string, args: readonly string[], signal?: AbortSignal): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(trainerPython(), ['-c', script, ...args], {
      env: { ...process.env, ...trainerEnv() },
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(signal === undefined ? {} : { signal }),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-8192)));
    child.once('error', (err) => {
      if (err.name === 'AbortError') resolve({ code: null, stdout, stderr: `${stderr}\naborted` });
      else reject(err);
    });
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

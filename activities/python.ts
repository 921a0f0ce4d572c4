/**
 * The trainer's Python interpreter, and the tool commands of its CLI that the GPU activities run once
 * (checking trainer configurations, building a tiny initial model, asking what is installed): no inline
 * Python, every call goes through `python -m gymflow_trainer` (trainer/gymflow_trainer/cli.py).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { PACKAGE_ROOT } from '../src/core/package-root.js';
import { parseTrainerEvent } from '../src/runtime/trainer-process.js';
import { defined } from '../src/core/defined.js';

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

/** The trainer CLI's tool commands (docs/trainer.md, "Status"): the activities' one way into Python. */
export type TrainerTool = 'check-config' | 'tiny' | 'probe';

/** What a tool command of the trainer's CLI answered. */
export interface TrainerToolResult {
  /** The exit status (2: a configuration error); null when it was aborted. */
  code: number | null;
  /** The `done` event's fields, when it succeeded. */
  done?: Record<string, unknown>;
  /** The `error` event, when it failed (the CLI writes one for every failure). */
  error?: { type: string; message: string };
  /** The last 8 KiB of standard error (a traceback, libraries' chatter). */
  stderr: string;
}

/**
 * Runs `python -m gymflow_trainer TOOL args…` with the trainer's interpreter and PYTHONPATH; resolves with
 * its exit status and its `done` or `error` event. Aborting kills it.
 */
export function runTrainerTool(tool: TrainerTool, args: readonly string[], signal?: AbortSignal): Promise<TrainerToolResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(trainerPython(), ['-m', 'gymflow_trainer', tool, ...args], {
      env: { ...process.env, ...trainerEnv() },
      stdio: ['ignore', 'pipe', 'pipe'],
      ...defined({ signal }),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-8192)));
    const result = (code: number | null, err: string): TrainerToolResult => {
      const r: TrainerToolResult = { code, stderr: err };
      for (const line of stdout.split('\n')) {
        const event = parseTrainerEvent(line);
        if (event?.event === 'done') r.done = event;
        else if (event?.event === 'error') r.error = { type: event.type, message: event.message };
      }
      return r;
    };
    child.once('error', (err) => {
      if (err.name === 'AbortError') resolve(result(null, `${stderr}\naborted`));
      else reject(err);
    });
    child.once('close', (code) => resolve(result(code, stderr)));
  });
}

/** Why a tool command failed, in one line: its `error` event, else the end of its standard error. */
export function toolFailure(r: TrainerToolResult): string {
  if (r.error !== undefined) return `${r.error.type}: ${r.error.message}`;
  return r.stderr.trim().split('\n').slice(-3).join(' | ');
}

const ProbeSchema = z.object({ modules: z.record(z.string(), z.string().nullable()) });

/**
 * The version of each Python module the trainer's interpreter imports (`probe`), `null` for one it cannot
 * import, or when the probe itself fails.
 */
export async function probeModules(modules: readonly string[], signal?: AbortSignal): Promise<Record<string, string | null>> {
  const r = await runTrainerTool('probe', modules, signal);
  const found = r.code === 0 ? ProbeSchema.safeParse(r.done).data?.modules : undefined;
  return Object.fromEntries(modules.map((m) => [m, found?.[m] ?? null]));
}

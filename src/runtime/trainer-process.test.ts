import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { processesMentioning } from '../../tests/support/processes.js';
import { requires } from '../../tests/support/requires.js';
import {
  attemptsWithoutProgress,
  buildTrainerLaunch,
  checkpointStepOf,
  classifyTrainerRun,
  initialHeartbeat,
  isCompleteCheckpoint,
  madeProgress,
  newestCheckpoint,
  nextHeartbeat,
  parseTrainerEvent,
  resumeFrom,
  runTrainer,
  superviseLaunch,
  trainerProcessCount,
  visibleGpuCount,
  type TrainerEvent,
  type TrainHeartbeat,
} from './trainer-process.js';
import { trainMetrics, trainNumbers } from '../loop/status.js';
import { PACKAGE_ROOT } from '../core/package-root.js';

const python = path.join(PACKAGE_ROOT, '.venv', 'bin', 'python');

describe('trainer command line', () => {
  const base = { python: '/venv/bin/python', trainerCommand: 'sft' as const, configFile: '/run/sft.json', launcher: 'auto' as const };

  it('is one plain process on CPU or one GPU, with --resume-from on a retry', () => {
    expect(buildTrainerLaunch({ ...base, processes: 1 })).toEqual({ command: '/venv/bin/python', args: ['-m', 'gymflow_trainer', 'sft', '--config', '/run/sft.json'] });
    expect(buildTrainerLaunch({ ...base, processes: 1, resumeFrom: '/run/out/checkpoint-4' }).args).toEqual([
      '-m', 'gymflow_trainer', 'sft', '--config', '/run/sft.json', '--resume-from', '/run/out/checkpoint-4',
    ]);
  });

  it('uses accelerate launch or torchrun for several GPUs', () => {
    expect(buildTrainerLaunch({ ...base, processes: 4, hasAccelerate: true }).args).toEqual([
      '-m', 'accelerate.commands.launch', '--multi_gpu', '--num_processes', '4', '-m', 'gymflow_trainer', 'sft', '--config', '/run/sft.json',
    ]);
    expect(buildTrainerLaunch({ ...base, processes: 2, hasAccelerate: false }).args).toEqual([
      '-m', 'torch.distributed.run', '--standalone', '--nproc_per_node', '2', '-m', 'gymflow_trainer', 'sft', '--config', '/run/sft.json',
    ]);
    expect(buildTrainerLaunch({ ...base, processes: 2, launcher: 'torchrun', hasAccelerate: true, resumeFrom: '/c' }).args.slice(0, 5)).toEqual([
      '-m', 'torch.distributed.run', '--standalone', '--nproc_per_node', '2',
    ]);
    // export-onnx is single-process whatever the GPU count.
    expect(buildTrainerLaunch({ ...base, trainerCommand: 'export-onnx', processes: 8 }).args.slice(0, 3)).toEqual(['-m', 'gymflow_trainer', 'export-onnx']);
    expect(() => buildTrainerLaunch({ ...base, processes: 0 })).toThrow(/processes must be a positive integer/);
  });

  it('counts visible GPUs from CUDA_VISIBLE_DEVICES, else nvidia-smi', () => {
    const smi = (): string => 'GPU 0: NVIDIA H100 (UUID: GPU-1)\nGPU 1: NVIDIA H100 (UUID: GPU-2)\n';
    expect(visibleGpuCount({ CUDA_VISIBLE_DEVICES: '0,1,3' }, smi)).toBe(3);
    expect(visibleGpuCount({ CUDA_VISIBLE_DEVICES: '' }, smi)).toBe(0);
    expect(visibleGpuCount({ CUDA_VISIBLE_DEVICES: '-1' }, smi)).toBe(0);
    expect(visibleGpuCount({ CUDA_VISIBLE_DEVICES: '0,-1,2' }, smi)).toBe(1);
    expect(visibleGpuCount({}, smi)).toBe(2);
    expect(visibleGpuCount({}, () => undefined)).toBe(0);
    expect(trainerProcessCount(undefined, 0)).toBe(1);
    expect(trainerProcessCount(undefined, 4)).toBe(4);
    expect(trainerProcessCount(2, 4)).toBe(2);
  });
});

describe('retries while attempts get further', () => {
  const beat = (attempt: number, resumedStep: number | null, stalled: number, checkpointStep: number | null = null): TrainHeartbeat => ({
    ...initialHeartbeat(attempt),
    resumedStep,
    attemptsWithoutProgress: stalled,
    checkpointStep,
  });

  it('counts the attempts in a row that ended without a newer checkpoint than they started from', () => {
    expect(checkpointStepOf('/run/output/checkpoint-12')).toBe(12);
    expect(checkpointStepOf('/run/output/final')).toBeNull();
    expect(checkpointStepOf(undefined)).toBeNull();
    // Attempt 1 started from the policy and left checkpoint 4: attempt 2 resumes from it, a fresh count.
    expect(attemptsWithoutProgress(beat(1, null, 0, 4), 4)).toBe(0);
    // Attempt 2 resumed from 4 and was killed before writing another: one attempt without progress.
    expect(attemptsWithoutProgress(beat(2, 4, 0), 4)).toBe(1);
    // … and attempt 3 too: two in a row; attempt 4 got to 6 (the server's copy of its heartbeat may be older than
    // the disk: what counts is where the next attempt resumes): the count starts again.
    expect(attemptsWithoutProgress(beat(3, 4, 1), 4)).toBe(2);
    expect(attemptsWithoutProgress(beat(4, 4, 2), 6)).toBe(0);
    // Never a checkpoint at all (a trainer that fails at start): every attempt counts.
    expect(attemptsWithoutProgress(beat(1, null, 0), null)).toBe(1);
    expect(attemptsWithoutProgress(beat(2, null, 1), null)).toBe(2);
    // No details, or details from a worker before the count: as after a first attempt.
    expect(attemptsWithoutProgress(undefined, null)).toBe(1);
    expect(attemptsWithoutProgress({ checkpoint: '/x/checkpoint-2', checkpointStep: 2, attempt: 1 }, 2)).toBe(0);
  });

  it('an attempt made progress when the trainer reported a newer checkpoint than it resumed from', () => {
    expect(madeProgress(beat(1, null, 0))).toBe(false);
    expect(madeProgress(beat(1, null, 0, 2))).toBe(true);
    expect(madeProgress(beat(2, 4, 0, 4))).toBe(false); // the trainer's start event names the checkpoint it resumed
    expect(madeProgress(beat(2, 4, 0, 6))).toBe(true);
  });
});

describe('trainer events → heartbeats', () => {
  /** The heartbeat after `lines` of trainer output, from attempt 1's empty one. */
  const beat = (lines: string[]): TrainHeartbeat =>
    lines.map(parseTrainerEvent).reduce((b, e) => (e === undefined ? b : nextHeartbeat(b, e)), initialHeartbeat(1));

  it('tracks step, loss and the newest checkpoint', () => {
    const lines = [
      '{"event":"start","command":"sft","examples":10,"total_steps":3,"start_step":0,"resumed_from":null}',
      'some launcher chatter',
      '{"event":"progress","step":1,"total_steps":3,"loss":5.5}',
      '{"event":"checkpoint","path":"/o/checkpoint-1","step":1}',
      '{"event":"progress","step":2,"total_steps":3,"loss":null}',
      '{"event":"done","command":"sft","step":3,"loss":5.4,"path":"/o/final"}',
    ];
    const events = lines.map(parseTrainerEvent).filter((e): e is TrainerEvent => e !== undefined);
    expect(events.map((e) => e.event)).toEqual(['start', 'progress', 'checkpoint', 'progress', 'done']);
    const beats = events.reduce((acc, e) => [...acc, nextHeartbeat(acc[acc.length - 1] ?? initialHeartbeat(1), e)], [initialHeartbeat(1)]);
    expect(beats[2]).toMatchObject({ step: 1, totalSteps: 3, loss: 5.5, checkpoint: null });
    expect(beats[3]).toMatchObject({ step: 1, checkpoint: '/o/checkpoint-1', checkpointStep: 1 });
    expect(beats[4]).toMatchObject({ step: 2, loss: null, checkpoint: '/o/checkpoint-1' });
    expect(beats[5]).toMatchObject({ step: 3, loss: 5.4, checkpoint: '/o/checkpoint-1', attempt: 1 });
    // A retry asked to resume from checkpoint-6: the trainer says it could not read it and went back to 4.
    const asked = { ...initialHeartbeat(2), checkpoint: '/o/checkpoint-6' };
    const skipped = parseTrainerEvent('{"event":"start","total_steps":8,"start_step":4,"resumed_from":"/o/checkpoint-4","unreadable_checkpoints":[{"path":"/o/checkpoint-6","error":"trainer_state.pt: EOFError: "}]}');
    if (skipped === undefined) throw new Error('start event not parsed');
    expect(nextHeartbeat(asked, skipped)).toMatchObject({ step: 4, checkpoint: '/o/checkpoint-4', checkpointStep: 4 });
    const none = parseTrainerEvent('{"event":"start","total_steps":8,"start_step":0,"resumed_from":null}');
    if (none === undefined) throw new Error('start event not parsed');
    expect(nextHeartbeat(asked, none)).toMatchObject({ step: 0, checkpoint: null, checkpointStep: null });
  });

  it("keeps RL's last reported entropy, and none for a command that reports none", () => {
    expect(beat(['{"event":"progress","step":1,"loss":0.5}']).entropy).toBeNull();
    const rl = ['{"event":"progress","step":1,"loss":0.1,"entropy":2.5}', '{"event":"progress","step":2,"loss":0.2,"entropy":2.25}'];
    expect(beat(rl)).toMatchObject({ step: 2, entropy: 2.25 });
    expect(beat([...rl, '{"event":"done","step":2,"loss":0.2}']).entropy).toBe(2.25); // the done event carries none
    expect(beat([...rl, '{"event":"progress","step":3,"loss":0.3,"entropy":null}']).entropy).toBeNull(); // non-finite
    expect(trainNumbers({ loss: 0.2, entropy: 2.25 })).toBe(', loss 0.2000, entropy 2.2500');
    expect(trainNumbers({ loss: null })).toBe('');
  });

  it("keeps the last reported gap between the rollout engine's log-probs and the trainer's", () => {
    expect(beat(['{"event":"progress","step":1,"loss":0.5,"entropy":2.5}']).mismatchKl).toBeNull(); // conversation samples: none
    const rl = [
      '{"event":"progress","step":1,"loss":0.1,"entropy":2.5,"mismatch_kl":3.1e-9}',
      '{"event":"progress","step":2,"loss":0.2,"entropy":2.25,"mismatch_kl":0.148}',
    ];
    expect(beat(rl)).toMatchObject({ step: 2, entropy: 2.25, mismatchKl: 0.148 });
    expect(beat([...rl, '{"event":"done","step":2,"loss":0.2}']).mismatchKl).toBe(0.148);
    // two significant digits: a healthy gap is ~1e-9, a broken policy's ~0.1
    expect(trainNumbers({ loss: 0.2, entropy: 2.25, mismatchKl: 3.14e-9 })).toBe(', loss 0.2000, entropy 2.2500, mismatch 3.1e-9');
    expect(trainNumbers({ loss: 0.2, entropy: null, mismatchKl: 0.148 })).toBe(', loss 0.2000, mismatch 0.15');
    expect(trainMetrics({ loss: 0.2, steps: 3, entropy: null, mismatchKl: 0.5 })).toEqual({ loss: 0.2, steps: 3, mismatchKl: 0.5 });
    expect(trainMetrics({ loss: null, steps: 3 })).toEqual({ loss: null, steps: 3 }); // a result recorded before either
  });

  it('keeps the count of samples the trainer cut at max_length, and the note names it', () => {
    expect(beat(['{"event":"start","command":"sft","total_steps":4}']).cutSamples).toBeNull();
    const rl = beat([
      '{"event":"start","command":"rl","total_steps":4,"cut_samples":5}',
      '{"event":"progress","step":1,"loss":0.1,"mismatch_kl":0.01}',
    ]);
    expect(rl).toMatchObject({ cutSamples: 5, mismatchKl: 0.01, totalSteps: 4 });
    expect(trainNumbers(rl)).toBe(', loss 0.1000, mismatch 0.010, 5 samples cut at max_length');
    expect(trainNumbers({ loss: 0.1, cutSamples: 1 })).toBe(', loss 0.1000, 1 sample cut at max_length');
    expect(trainNumbers({ loss: 0.1, cutSamples: 0 })).toBe(', loss 0.1000');
  });

  it('resumes from the newer of the heartbeat checkpoint and the newest complete one on disk', async () => {
    const out = await mkdtemp(path.join(tmpdir(), 'gymflow-resume-'));
    const checkpoint = async (name: string, complete = true): Promise<string> => {
      const dir = path.join(out, name);
      await mkdir(path.join(dir, 'model'), { recursive: true });
      if (complete) await writeFile(path.join(dir, 'trainer_state.pt'), 'state');
      return dir;
    };
    const c2 = await checkpoint('checkpoint-2');
    const c4 = await checkpoint('checkpoint-4');
    const c10 = await checkpoint('checkpoint-10');
    await checkpoint('checkpoint-12', false); // rotation was deleting it, or not a trainer dir: no state file
    await checkpoint('.checkpoint-14.tmp-99'); // being written when the trainer died
    await checkpoint('final');
    // The heartbeat the server holds is the newest: take it.
    expect(resumeFrom({ checkpoint: c10, checkpointStep: 10 }, out)).toBe(c10);
    // Heartbeats are throttled: the server's copy names an older checkpoint than the trainer wrote.
    expect(resumeFrom({ checkpoint: c2, checkpointStep: 2 }, out)).toBe(c10);
    expect(newestCheckpoint(out)).toEqual({ path: c10, step: 10 }); // numeric, not lexical: 10 > 4
    // The heartbeated checkpoint was rotated away (keep_last): the newest complete one on disk.
    await rm(c10, { recursive: true });
    await rm(c2, { recursive: true });
    expect(resumeFrom({ checkpoint: c2, checkpointStep: 2 }, out)).toBe(c4);
    // No checkpoint in the details (the worker died before a heartbeat with one was sent), or no details.
    expect(resumeFrom({ ...initialHeartbeat(1) }, out)).toBe(c4);
    expect(resumeFrom(undefined, out)).toBe(c4);
    // A heartbeat checkpoint outside the output directory still counts when it is complete and newer.
    const other = await mkdtemp(path.join(tmpdir(), 'gymflow-resume-other-'));
    const o7 = path.join(other, 'checkpoint-7');
    await mkdir(o7);
    await writeFile(path.join(o7, 'trainer_state.pt'), 'state');
    expect(resumeFrom({ checkpoint: o7, checkpointStep: 7 }, out)).toBe(o7);
    expect(resumeFrom({ checkpoint: o7 }, undefined)).toBe(o7);
    // Another host: neither the heartbeat's checkpoint nor the output directory is there.
    expect(resumeFrom({ checkpoint: c2, checkpointStep: 2 }, path.join(out, 'missing'))).toBeUndefined();
    expect(resumeFrom({ checkpoint: null }, undefined)).toBeUndefined();
    expect(isCompleteCheckpoint(path.join(out, 'checkpoint-12'))).toBe(false);
    expect(isCompleteCheckpoint(path.join(out, 'final'))).toBe(false);
  });
});

/** Live (not zombie) processes of group `pgid`, read from /proc: a killed orphan may linger as a zombie until reaped. */
function liveInGroup(pgid: number): number[] {
  const live: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // exited meanwhile
    }
    // pid (comm) state ppid pgrp …; comm may hold spaces, so split after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) === pgid && fields[0] !== 'Z') live.push(Number(entry));
  }
  return live;
}

const py = requires.python(['torch', 'transformers', 'gymflow_trainer']);

/** A tiny model for the trainer (`model.tiny`). */
const TINY_MODEL = { hidden_size: 32, intermediate_size: 64, num_hidden_layers: 1, num_attention_heads: 2, num_key_value_heads: 1 };

/** Runs `fn` with a fresh temporary directory, removed afterwards however `fn` ends. */
async function inTempDir(prefix: string, fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), prefix));
  try {
    await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** `dir/sft.json`: SFT of the tiny model on {@link writeSftData}'s records into `dir/o`, with `fields` on top. */
async function writeSftConfig(dir: string, fields: Record<string, unknown>): Promise<string> {
  const config = path.join(dir, 'sft.json');
  await writeFile(config, JSON.stringify({ data: await writeSftData(dir), output_dir: path.join(dir, 'o'), model: { tiny: TINY_MODEL }, ...fields }));
  return config;
}

/** Four copies of a one-step SFT record, as `gymflow export --format sft` writes them, in `dir/sft.jsonl`. */
async function writeSftData(dir: string): Promise<string> {
  const message = (role: string, content: string): Record<string, unknown> => ({ role, content, tool_calls: null, thought: null, name: null, tool_call_id: null, train: role === 'assistant', step_index: role === 'system' || role === 'user' ? null : 0, step_reward: null, env_reward: null });
  const record = { messages: [message('system', 'Tools: submit.'), message('user', 'Say hi.'), message('assistant', 'hi')], tools: '[]', trajectory_id: 't', task_id: 'task', env_id: 'gymflow/echo-v0', domain: 'demo', agent: 'scripted', success: true, reward: 1, num_steps: 1, outcome_reason: 'submitted' };
  const file = path.join(dir, 'sft.jsonl');
  await writeFile(file, `${JSON.stringify(record)}\n`.repeat(4));
  return file;
}

/**
 * `dir/held.py`: the trainer's CLI, except that once it has announced the checkpoint of step `step` it waits there
 * until a signal ends it (SIGTERM raises `Terminated` out of the wait, as out of any training step).
 */
async function holdAfterCheckpoint(dir: string, step: number): Promise<string> {
  const launcher = path.join(dir, 'held.py');
  const lines = ['import sys, time', 'from gymflow_trainer import cli', 'from gymflow_trainer.events import EventWriter', 'real = EventWriter.checkpoint', '', ''];
  lines.push('def checkpoint(self, path, step, **fields):', '    real(self, path, step, **fields)', `    if step == ${step}:`, '        time.sleep(3600)', '', '');
  await writeFile(launcher, [...lines, 'EventWriter.checkpoint = checkpoint', 'sys.exit(cli.main(sys.argv[1:]))', ''].join('\n'));
  return launcher;
}

py.describe('running the trainer', () => {
  it('kills the whole process group on abort, SIGKILL after the grace when SIGTERM is ignored', async () => {
    // A "trainer" that ignores SIGTERM and has a grandchild: only a group kill with SIGKILL ends both.
    const script = [
      'import signal, subprocess, sys, json, time',
      'signal.signal(signal.SIGTERM, signal.SIG_IGN)',
      'child = subprocess.Popen(["sleep", "600"])',
      'print(json.dumps({"event": "start", "total_steps": 10, "grandchild": child.pid}), flush=True)',
      'time.sleep(600)',
    ].join('\n');
    const controller = new AbortController();
    let grandchild = 0;
    const run = runTrainer({
      launch: { command: python, args: ['-c', script] },
      signal: controller.signal,
      killGraceMs: 500,
      onEvent: (e) => {
        grandchild = Number((e as { grandchild?: number }).grandchild);
        controller.abort();
      },
    });
    const result = await run;
    expect(result.aborted).toBe(true);
    expect(result.killed).toBe(true);
    expect(result.exitSignal).toBe('SIGKILL');
    expect(grandchild).toBeGreaterThan(0);
    expect(liveInGroup(result.pid)).toEqual([]);
    expect(classifyTrainerRun(result, 'trainer').kind).toBe('cancelled');
    // ~0.5 s idle: a Python start and the 500 ms grace; room for a start on a busy machine.
  }, 60_000);

  it('starts the trainer with passive OpenMP threads unless the caller or the environment says otherwise', async () => {
    const script = 'import json, os; print(json.dumps({"event": "start", "total_steps": 1, "wait": os.environ.get("OMP_WAIT_POLICY")}), flush=True)';
    const policy = async (env?: Record<string, string>): Promise<unknown> => {
      let seen: unknown;
      await runTrainer({ launch: { command: python, args: ['-c', script] }, ...(env ? { env } : {}), onEvent: (e) => (seen = (e as { wait?: unknown }).wait) });
      return seen;
    };
    const before = process.env['OMP_WAIT_POLICY'];
    delete process.env['OMP_WAIT_POLICY'];
    try {
      expect(await policy()).toBe('PASSIVE');
      expect(await policy({ OMP_WAIT_POLICY: 'ACTIVE' })).toBe('ACTIVE');
      process.env['OMP_WAIT_POLICY'] = 'ACTIVE';
      expect(await policy()).toBe('ACTIVE');
    } finally {
      if (before === undefined) delete process.env['OMP_WAIT_POLICY'];
      else process.env['OMP_WAIT_POLICY'] = before;
    }
  }, 60_000);

  it('stops the trainer, and a command it supervises, when the process that ran them is killed (-9)', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'gymflow-lifeline-'));
    try {
      const data = await writeSftData(dir);
      const config = path.join(dir, 'sft.json');
      // Trains for hours and says nothing on stdout after its start, so no broken pipe can stop it: only the lifeline.
      await writeFile(config, JSON.stringify({ data, output_dir: path.join(dir, 'out'), epochs: 100_000, log_every: 1e9, save_every: 1e9, model: { tiny: TINY_MODEL } }));
      const sleeper = `import subprocess, time; subprocess.Popen(["sleep", "600"]); time.sleep(600)  # ${dir}`;
      const launches = [buildTrainerLaunch({ python, trainerCommand: 'sft', configFile: config, processes: 1, launcher: 'auto' }), superviseLaunch(python, { command: python, args: ['-c', sleeper] })];
      const parent = spawn(process.execPath, ['--import', 'tsx', path.join(PACKAGE_ROOT, 'tests', 'support', 'trainer-parent.ts'), JSON.stringify(launches)], { stdio: ['ignore', 'pipe', 'inherit'] });
      const exited = new Promise((resolve) => parent.once('exit', resolve));
      let started = false;
      parent.stdout.on('data', (chunk: Buffer) => (started ||= chunk.toString().includes('event start')));
      // Once the trainer has said `start` (its last word on stdout): the parent, the trainer, the supervisor and
      // its command (the sleeper's own child shows no marker).
      // ~5 s idle (tsx, then torch's import); a deadline for a start that never comes, not for a slow one.
      const deadline = Date.now() + 150_000;
      while (!(started && processesMentioning(dir).length >= 4)) {
        if (Date.now() > deadline) throw new Error(`not running: ${processesMentioning(dir).join(' ')}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      const running = processesMentioning(dir);
      parent.kill('SIGKILL');
      await exited;
      // Gone through their SIGTERM path: the lifeline's SIGKILL would come only 30 s on.
      const killedAt = Date.now();
      while (processesMentioning(dir).length > 0 && Date.now() - killedAt < 20_000) await new Promise((r) => setTimeout(r, 100));
      expect(processesMentioning(dir), `left of ${running.join(' ')}`).toEqual([]);
    } finally {
      for (const pid of processesMentioning(dir)) process.kill(pid, 'SIGKILL');
      await rm(dir, { recursive: true, force: true });
    }
  }, 240_000);

  it('stops a real SFT run on abort (exit 143, checkpoint kept) and resumes from it', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'gymflow-trainer-proc-'));
    const data = path.join(dir, 'sft.jsonl');
    const gen = spawnSync(
      process.execPath,
      [path.join(PACKAGE_ROOT, 'bin', 'gymflow.js'), 'collect', '--env', 'gymflow/tool-use-v0', '--agent', 'expert', '-n', '6', '-o', path.join(dir, 'runs.jsonl'), '--no-progress', '--store', path.join(dir, 'store')],
      { encoding: 'utf8' },
    );
    expect(gen.status, gen.stderr).toBe(0);
    const exp = spawnSync(process.execPath, [path.join(PACKAGE_ROOT, 'bin', 'gymflow.js'), 'export', '--format', 'sft', '--in', path.join(dir, 'runs.jsonl'), '-o', data], { encoding: 'utf8' });
    expect(exp.status, exp.stderr).toBe(0);
    const config = path.join(dir, 'sft.json');
    const out = path.join(dir, 'out');
    await writeFile(config, JSON.stringify({ data, output_dir: out, max_steps: 8, epochs: 100, save_every: 1, keep_last: 2, max_length: 256, model: { tiny: TINY_MODEL } }));
    // The first run holds after it announces checkpoint 4, until the abort's SIGTERM: however late this process
    // reads that event on a busy machine, the trainer cannot train past it and finish before the abort lands.
    const held = await holdAfterCheckpoint(dir, 4);
    const controller = new AbortController();
    let beat = initialHeartbeat(1);
    // What the server would hold with throttled heartbeats: the details after the first checkpoint only.
    let stale: TrainHeartbeat | undefined;
    const first = await runTrainer({
      launch: { command: python, args: [held, 'sft', '--config', config] },
      signal: controller.signal,
      onEvent: (e) => {
        beat = nextHeartbeat(beat, e);
        if (e.event === 'checkpoint') stale ??= beat;
        if (e.event === 'checkpoint' && e.step >= 4) controller.abort();
      },
    });
    expect(first.aborted).toBe(true);
    expect(first.exitCode).toBe(143);
    expect(first.error?.type).toBe('Terminated');
    expect(liveInGroup(first.pid)).toEqual([]);
    expect(beat.checkpointStep).toBe(4);
    expect(resumeFrom(beat, out)).toBe(beat.checkpoint);
    // keep_last 2 rotated the stale heartbeat's checkpoint away: resume from the newest on disk instead.
    expect(stale?.checkpointStep).toBe(1);
    expect(existsSync(stale?.checkpoint ?? '')).toBe(false);
    const resume = resumeFrom(stale, out);
    expect(resume).toBe(beat.checkpoint);

    const events: TrainerEvent[] = [];
    const second = await runTrainer({
      launch: buildTrainerLaunch({ python, trainerCommand: 'sft', configFile: config, processes: 1, launcher: 'auto', resumeFrom: resume }),
      onEvent: (e) => events.push(e),
    });
    expect(classifyTrainerRun(second, 'trainer')).toEqual({ kind: 'ok' });
    const start = events.find((e) => e.event === 'start');
    expect(start).toMatchObject({ start_step: 4, resumed_from: resume });
    expect(second.done?.step).toBe(8);
    // CPU-bound (two CLI starts, two trainer starts): 31-56 s on a busy 2-core machine (2026-11-28), where the
    // former 200-step plan took 73 s to over 120 s, the limit it had then.
  }, 240_000);

  it('maps a run whose gradients stay NaN to exit 5, diverged', async () => {
    await inTempDir('gymflow-trainer-diverged-', async (dir) => {
      const config = await writeSftConfig(dir, { epochs: 5, batch_size: 1, optim: { lr: 1e30, max_skipped_steps: 1 } });
      const r = await runTrainer({ launch: buildTrainerLaunch({ python, trainerCommand: 'sft', configFile: config, processes: 1, launcher: 'auto' }) });
      const outcome = classifyTrainerRun(r, 'trainer sft');
      expect(outcome).toEqual({ kind: 'diverged', message: expect.stringMatching(/^trainer sft failed \(exit 5\): TrainingDiverged: steps 2-3: the gradient norm was NaN or infinite 2 times in a row/) as string });
    });
  }, 120_000);

  it('maps a trainer that runs out of memory to exit 6, out_of_memory', async () => {
    // A real allocation failure: a model of a terabyte, in a process limited to 64 GiB of address space.
    await inTempDir('gymflow-trainer-oom-', async (dir) => {
      const config = await writeSftConfig(dir, { model: { tiny: { ...TINY_MODEL, hidden_size: 2 ** 30 } } });
      const launch = buildTrainerLaunch({ python, trainerCommand: 'sft', configFile: config, processes: 1, launcher: 'auto' });
      const r = await runTrainer({ launch: { command: 'prlimit', args: [`--as=${64 * 2 ** 30}`, '--', launch.command, ...launch.args] } });
      const outcome = classifyTrainerRun(r, 'trainer sft');
      expect(outcome).toEqual({ kind: 'out_of_memory', message: expect.stringMatching(/^trainer sft failed \(exit 6\): OutOfMemory: outside the training steps' passes: RuntimeError: .*DefaultCPUAllocator: can't allocate memory/) as string });
    });
  }, 120_000);

  it('maps a training that stops making progress to exit 7, stalled', async () => {
    await inTempDir('gymflow-trainer-stalled-', async (dir) => {
      const config = await writeSftConfig(dir, { batch_size: 1, stall_timeout_s: 2 });
      // Step 2 never returns, as on a GPU that stopped answering: a launcher around the trainer's CLI makes it so.
      const launcher = path.join(dir, 'hang.py');
      const hang = ['import sys, time', 'from gymflow_trainer import cli, optim', 'real = optim.optimizer_step', '', '', 'def optimizer_step(*args, **kwargs):'];
      hang.push('    out = real(*args, **kwargs)', '    if args[-1] == 2:', '        time.sleep(3600)', '    return out', '', '', 'optim.optimizer_step = optimizer_step');
      await writeFile(launcher, [...hang, 'sys.exit(cli.main(sys.argv[1:]))', ''].join('\n'));
      const logFile = path.join(dir, 'logs', 'trainer.log');
      const r = await runTrainer({ launch: { command: python, args: [launcher, 'sft', '--config', config] }, logFile });
      expect(classifyTrainerRun(r, 'trainer sft')).toEqual({
        kind: 'stalled',
        message: expect.stringMatching(/^trainer sft failed \(exit 7\): Stalled: no progress for 2 s since optimizer step 2 \(stall_timeout_s\)/) as string,
      });
      // The log keeps what the result only has the end of: every event, and the stacks the watchdog dumped.
      const log = readFileSync(logFile, 'utf8');
      expect(log).toMatch(new RegExp(`^=== \\S+ pid ${r.pid}: \\S*python \\S*hang\\.py sft --config `));
      expect(log).toContain('{"event":"progress","step":1,');
      expect(log).toMatch(/gymflow watchdog: no progress for 2 s since optimizer step 2; stacks of every thread:\n[^]*in optimizer_step/);
      expect(log.endsWith('=== exit 7\n')).toBe(true);
    });
  }, 120_000);

  it('maps a configuration error to exit 2 with the trainer message', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'gymflow-trainer-bad-'));
    const config = path.join(dir, 'sft.json');
    await writeFile(config, JSON.stringify({ data: '/x', output_dir: path.join(dir, 'o'), bogus: 1, model: { path: '/m' } }));
    const r = await runTrainer({ launch: buildTrainerLaunch({ python, trainerCommand: 'sft', configFile: config, processes: 1, launcher: 'auto' }) });
    const outcome = classifyTrainerRun(r, 'trainer sft');
    expect(outcome.kind).toBe('config');
    expect(outcome).toMatchObject({ message: expect.stringContaining("unknown key 'bogus'") as string });
  }, 120_000);
});

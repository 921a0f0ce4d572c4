import { afterAll, beforeAll, expect, it } from 'vitest';
import { requires } from '../../../tests/support/requires.js';
import { initialContext } from '../../core/agent.js';
import { checkEnv } from '../../core/check-env.js';
import { getProfile } from '../../core/profiles/index.js';
import { make } from '../../core/registry.js';
import { dockerClient } from '../../sandbox/index.js';
import type { TimeStep } from '../../core/types.js';
import { SANDBOX_ENV_ID, SandboxEnv } from './env.js';
import { SandboxExpert } from './expert.js';
import { registerSandboxEnv } from './register.js';

const docker = requires.docker();

/** Runs the expert through the tools; returns the last time step. */
async function runExpert(env: SandboxEnv, first: TimeStep): Promise<TimeStep> {
  const agent = new SandboxExpert();
  let ctx = initialContext(first, env.tools);
  let ts = first;
  for (let i = 0; i < 10 && !ts.terminated && !ts.truncated; i++) {
    ts = await env.step((await agent.act(ctx)).action);
    ctx = { ...ctx, stepIndex: i + 1, observation: ts.observation };
  }
  return ts;
}

it('offers exactly the coding profile tools with their categories', () => {
  const byName = (tools: readonly { name: string; category: string }[]): Record<string, string> =>
    Object.fromEntries(tools.map((t) => [t.name, t.category]));
  expect(byName(new SandboxEnv().tools)).toEqual(byName(getProfile('coding').tools));
});

it('rejects a bad sandbox config when it is built, before any Docker call', () => {
  expect(() => new SandboxEnv({ sandbox: { networkmode: 'bridge' } })).toThrow(/unknown key 'networkmode'/);
  expect(() => new SandboxEnv({ testTimeoutS: -1 })).toThrow(/testTimeoutS/);
});

it('refuses a misspelt option and a shell time limit above its maximum, naming them', () => {
  expect(() => new SandboxEnv({ shelTimeoutS: 5 })).toThrow('gymflow/sandbox-v0 kwargs $: Unrecognized key: "shelTimeoutS" (known: tasks, sandbox, testTimeoutS, shellTimeoutS, maxShellTimeoutS, pool)');
  expect(() => new SandboxEnv({ shellTimeoutS: 60, maxShellTimeoutS: 30 })).toThrow('gymflow/sandbox-v0 kwargs $.maxShellTimeoutS: must be at least shellTimeoutS');
});

docker.describe('gymflow/sandbox-v0', () => {
  it('passes checkEnv', async () => {
    registerSandboxEnv();
    const report = await checkEnv(() => make(SANDBOX_ENV_ID), { seed: 0 });
    expect(report.checks.filter((c) => !c.ok)).toEqual([]);
  }, 180_000);

  it('every reference patch flips its tests (F2P fail before, pass after; P2P pass both) when the expert applies it through the tools', async () => {
    // Two environments (two containers) split the tasks: CI has two cores.
    const envs = [new SandboxEnv(), new SandboxEnv()];
    try {
      const tasks = envs[0]!.listTasks();
      const problems: string[] = [];
      await Promise.all(
        envs.map(async (env, k) => {
          for (const t of tasks.filter((_, i) => i % envs.length === k)) {
            const first = await env.reset({ task: t.id, seed: 0 });
            const before = await env.runTests();
            if (before.failToPass.passed.length > 0) problems.push(`${t.id}: FAIL_TO_PASS passing before the fix: ${before.failToPass.passed.join(', ')}`);
            if (before.passToPass.failed.length > 0) problems.push(`${t.id}: PASS_TO_PASS failing before the fix: ${before.passToPass.failed.join(', ')}`);
            const last = await runExpert(env, first);
            if (!(last.terminated && last.info.success === true && last.reward === 1)) problems.push(`${t.id}: expert did not resolve it: ${last.observation}`);
          }
        }),
      );
      expect(problems).toEqual([]);
    } finally {
      await Promise.all(envs.map((e) => e.close()));
    }
  }, 300_000);
});

docker.describe('gymflow/sandbox-v0 tools', () => {
  let env: SandboxEnv;
  beforeAll(async () => {
    env = new SandboxEnv();
    await env.reset({ task: 'inventory-two-files', seed: 0 });
  });
  afterAll(async () => {
    await env?.close();
  });
  const step = (tool: string, params: Record<string, unknown>): Promise<TimeStep> => env.step({ tool, params });

  it('file_read reads a line range; file_write creates parent directories', async () => {
    expect((await step('file_read', { path: 'shop/models.py', start_line: 8, end_line: 9 })).observation).toBe(
      '    def total(self):\n        return self.price * self.qty\n',
    );
    expect((await step('file_write', { path: 'new/dir/x.py', content: 'X = "$(id)"\n' })).observation).toMatch(/Wrote 12 bytes/);
    expect((await step('file_read', { path: 'new/dir/x.py' })).observation).toBe('X = "$(id)"\n');
    expect((await step('file_read', { path: 'missing.py' })).observation).toMatch(/no such file: missing.py/);
  });

  it('file_read refuses a directory and a reversed line range with clear errors', async () => {
    const dir = await step('file_read', { path: 'shop' });
    expect(dir.observation).toBe('Error: is a directory, not a file: shop (list it with the shell tool: ls)');
    expect(dir.info.exitCode).not.toBe(0);
    const reversed = await step('file_read', { path: 'shop/models.py', start_line: 5, end_line: 2 });
    expect(reversed.observation).toBe('Error: start_line 5 is after end_line 2');
    expect(reversed.info).toMatchObject({ exitCode: 2, error: { code: 'tool_failed' } });
  });

  it('runTests puts /work back as it was: the hidden test files do not stay for the agent to read', async () => {
    const [testPath] = Object.keys(env.getTask('inventory-two-files').testFiles).sort();
    if (testPath === undefined) throw new Error('the task has no test files');
    await step('file_write', { path: testPath, content: 'AGENT VERSION\n' });
    // sha256sum's complaint about an unreadable file goes through sort with the sums: the two streams would
    // interleave differently from one run to the next.
    const state = async (): Promise<string> =>
      (await step('shell', { command: 'git status --porcelain --untracked-files=all; find . -path ./.git -prune -o -print | sort; find . -path ./.git -prune -o -type f -exec sha256sum {} + 2>&1 | sort' })).observation;
    const before = await state();
    const tests = await env.runTests();
    expect(tests.failToPass.passed.length + tests.failToPass.failed.length).toBeGreaterThan(0); // the hidden tests ran
    expect(await state()).toBe(before);
    expect((await step('file_read', { path: testPath })).observation).toBe('AGENT VERSION\n');
    // Something unreadable in /work (the agent's doing): at least the test files' paths are put back.
    await step('shell', { command: 'echo secret > locked.txt && chmod 000 locked.txt' });
    const locked = await state();
    await env.runTests();
    expect(await state()).toBe(locked);
    await step('shell', { command: `chmod 644 locked.txt && rm locked.txt && git checkout -- ${testPath}` });
  });

  it('search passes pattern, path and glob as argv (no shell interpretation)', async () => {
    expect((await step('search', { pattern: 'def total', glob: '*.py' })).observation).toBe('shop/models.py:8:    def total(self):\n');
    expect((await step('search', { pattern: '$(touch pwned)', path: 'shop' })).observation).toBe('No matches.');
    expect((await step('shell', { command: 'ls pwned 2>&1 | head -1' })).observation).toMatch(/No such file/);
  });

  it('git: diff, add, commit, checkout of files; refuses options that escape', async () => {
    await step('file_write', { path: 'shop/report.py', content: 'BROKEN\n' });
    expect((await step('git', { subcommand: 'diff', args: ['--stat'] })).observation).toMatch(/shop\/report.py/);
    expect((await step('git', { subcommand: 'checkout', args: ['shop/report.py'] })).info.exitCode).toBe(0);
    expect((await step('file_read', { path: 'shop/report.py' })).observation).toMatch(/def report_total/);
    expect((await step('git', { subcommand: 'add', args: ['new'] })).info.exitCode).toBe(0);
    expect((await step('git', { subcommand: 'commit', args: ['-m', 'add x'] })).info.exitCode).toBe(0);
    expect((await step('git', { subcommand: 'log', args: ['--oneline'] })).observation).toMatch(/add x\n.*base state/);
    expect((await step('git', { subcommand: 'diff', args: ['--output=/tmp/x'] })).observation).toMatch(/not allowed/);
    expect((await step('git', { subcommand: 'checkout', args: ['-b', 'evil'] })).observation).toMatch(/not allowed/);
  });

  it('submit without a fix ends the episode unresolved with partial credit', async () => {
    const ts = await step('submit', {});
    expect(ts).toMatchObject({ terminated: true, truncated: false, reward: 0, info: { success: false, score: 0, reason: 'submitted' } });
    expect(ts.observation).toMatch(/FAIL_TO_PASS 0\/2 passing, PASS_TO_PASS 1\/1 passing: not resolved/);
  });
});

docker.describe('gymflow/sandbox-v0 warm pool', () => {
  it('a repeated task is served by a spare restored exactly; another task falls back to an in-place restore; close removes every container', async () => {
    const env = new SandboxEnv({ pool: { sparesPerKey: 1, maxSpares: 2 } });
    const pool = env.sandboxPool;
    if (!pool) throw new Error('no pool');
    const ids = new Set<string>();
    const state = async (): Promise<string> =>
      (await env.step({ tool: 'shell', params: { command: 'git status --porcelain; git diff gymflow-base --stat; find . -path ./.git -prune -o -type f -print | sort; ls -A /tmp ~' } })).observation;
    try {
      await env.reset({ task: 'fizzbuzz-order', seed: 0 });
      ids.add(env.currentSandbox?.id ?? '');
      const initial = await state();
      expect(initial).toMatch(/^\.\/fizz\.py$/m);
      await pool.idle();
      await env.step({ tool: 'shell', params: { command: 'echo broken > fizz.py; rm -rf tests; git add -A; git commit -qm x; echo t > /tmp/t' } });
      await env.reset({ task: 'fizzbuzz-order', seed: 0 });
      ids.add(env.currentSandbox?.id ?? '');
      expect(pool.stats.hits).toBe(1);
      expect(ids.size).toBe(2);
      expect(await state()).toBe(initial);
      await env.reset({ task: 'celsius-sign', seed: 0 }); // first sight of the task: built in place
      await pool.idle();
      await env.reset({ task: 'fizzbuzz-order', seed: 0 }); // recycled to fizzbuzz-order after the hit
      ids.add(env.currentSandbox?.id ?? '');
      expect(await state()).toBe(initial);
      await env.reset({ task: 'leap-year-century', seed: 0 });
      await pool.idle();
      await env.reset({ task: 'celsius-sign', seed: 0 });
      expect(pool.stats.misses).toBeGreaterThanOrEqual(1);
      ids.add(env.currentSandbox?.id ?? '');
    } finally {
      await env.close();
    }
    expect(pool.size + pool.preparing).toBe(0);
    for (const id of ids) await expect(dockerClient().getContainer(id).inspect()).rejects.toThrow(/no such container/i);
  }, 120_000);
});

/**
 * The trainer CLI's tool commands as the activities call them: the `done` or `error` event and the exit
 * status come back parsed.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { requires } from '../tests/support/requires.js';
import { probeModules, runTrainerTool, toolFailure } from './python.js';

const python = requires.python(['gymflow_trainer']);

python.describe('runTrainerTool', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'gymflow-python-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  python.it('check-config: done for a valid configuration, exit 2 and the field for a bad one', async () => {
    const good = path.join(dir, 'good.json');
    await writeFile(good, JSON.stringify({ data: 'd.jsonl', output_dir: 'o', model: { path: '/m' } }));
    const ok = await runTrainerTool('check-config', ['sft', '--config', good]);
    expect(ok.code).toBe(0);
    expect(ok.done).toMatchObject({ event: 'done', command: 'check-config', checked: 'sft' });
    expect(ok.error).toBeUndefined();

    const bad = path.join(dir, '$.train.config.json');
    await writeFile(bad, JSON.stringify({ data: 'd.jsonl', output_dir: 'o', model: { path: '/m' }, bogus: 1 }));
    const r = await runTrainerTool('check-config', ['rl', '--config', bad]);
    expect(r.code).toBe(2);
    expect(r.done).toBeUndefined();
    expect(r.error?.type).toBe('ConfigError');
    expect(r.error?.message).toMatch(/^\$\.train\.config\.json: unknown key 'bogus' at \$/);
    expect(toolFailure(r)).toBe(`ConfigError: ${r.error?.message ?? ''}`);
  });

  python.it('tiny: a bad TinyModelConfig names the section it was given', async () => {
    const args = ['--config', JSON.stringify({ hidden_size: 0 }), '--out', path.join(dir, 'model'), '--name', 'pipeline config', '--at', '$.policy.init.tiny'];
    const r = await runTrainerTool('tiny', args);
    expect(r.code).toBe(2);
    expect(r.error?.message).toBe('$.policy.init.tiny.hidden_size must be > 0 (got 0)');
  });

  python.it('probeModules: a version for what imports, null for what does not', async () => {
    const m = await probeModules(['yaml', 'gymflow_no_such_module']);
    expect(m['yaml']).toMatch(/^\d+\./);
    expect(m['gymflow_no_such_module']).toBeNull();
  });
});

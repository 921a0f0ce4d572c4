import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { requires } from '../../tests/support/requires.js';
import { ConfigError } from '../core/errors.js';
import { requireTemporalBinary, runTemporal, searchAttributeFlags, TemporalCliError, temporalBinary } from './temporal-cli.js';
import { PACKAGE_ROOT } from '../core/package-root.js';

const temporal = requires.temporal();

describe('temporal CLI lookup', () => {
  it('a TEMPORAL_CLI that is not executable is "none", and the error says so', () => {
    const env = { TEMPORAL_CLI: join(PACKAGE_ROOT, 'no-such-temporal'), PATH: '' };
    expect(temporalBinary(env)).toBeUndefined();
    expect(() => requireTemporalBinary(env)).toThrow(ConfigError);
    expect(() => requireTemporalBinary(env)).toThrow(/TEMPORAL_CLI=.*no-such-temporal: not an executable file/);
  });

  it('without TEMPORAL_CLI the error names every place it looked', () => {
    const env = { PATH: '/nonexistent' };
    const found = temporalBinary(env);
    if (found !== undefined) expect(found).toBe(join(PACKAGE_ROOT, '.venv', 'bin', 'temporal'));
    else expect(() => requireTemporalBinary(env)).toThrow(/\$TEMPORAL_CLI, .*\.venv\/bin\/temporal and PATH; run `npm run setup`/);
  });

  it('turns search attributes into start-dev flags', () => {
    expect(searchAttributeFlags([{ name: 'A', type: 'Keyword' }, { name: 'B', type: 'Int' }])).toEqual(['--search-attribute', 'A=Keyword', '--search-attribute', 'B=Int']);
  });
});

temporal.describe('runTemporal', () => {
  it('returns the output, and a failing command throws an error naming it', async () => {
    expect((await runTemporal(['--version'])).stdout).toMatch(/^temporal version/);
    const failing = runTemporal(['workflow', 'describe', '--workflow-id', 'x', '--address', '127.0.0.1:1', '--command-timeout', '2s']);
    await expect(failing).rejects.toBeInstanceOf(TemporalCliError);
    await expect(failing).rejects.toThrow(/temporal workflow describe --workflow-id x .*exited with 1/);
    expect((await runTemporal(['no-such-command'], { check: false })).code).not.toBe(0);
  }, 30_000);
});

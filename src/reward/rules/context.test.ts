import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../core/errors.js';
import { getProfile } from '../../core/profiles/registry.js';
import { trajectory } from '../__fixtures__/trajectories.js';
import { categoryFromName, prepareRuleContext, targetOf } from './context.js';

const coding = getProfile('coding');

describe('rule context', () => {
  it('guesses categories of unknown tools from their names', () => {
    expect(categoryFromName('Read')).toBe('read');
    expect(categoryFromName('MultiEdit')).toBe('write');
    expect(categoryFromName('str_replace_editor')).toBe('write');
    expect(categoryFromName('Bash')).toBe('execute');
    expect(categoryFromName('Grep')).toBe('search');
    expect(categoryFromName('send_message')).toBe('communicate');
    expect(categoryFromName('think')).toBe('think');
    expect(categoryFromName('finish')).toBe('submit');
    expect(categoryFromName('frobnicate')).toBe('execute');
  });

  it('prefers the profile, then an adapter-recorded category, then the name', () => {
    const t = trajectory([
      ['file_read', { path: 'a' }],
      ['Frob', {}, 'ok', { metadata: { category: 'read' } }],
      ['Frob', {}, 'ok', { metadata: { category: 'nonsense' } }],
      ['str_replace_editor', { command: 'view', path: 'a' }],
    ]);
    expect(prepareRuleContext(t, coding).categories).toEqual(['read', 'read', 'execute', 'read']);
  });

  it('finds targets and marks state changes', () => {
    expect(targetOf({ file_path: './x/y.py' })).toBe('x/y.py');
    expect(targetOf({ pattern: 'x' })).toBeUndefined();
    const t = trajectory([
      ['file_write', { path: 'a', content: 'x' }],
      ['shell', { command: 'ls' }],
      ['shell', { command: 'make' }],
      ['file_write', { path: 'a', content: 'x' }, 'denied', { error: { code: 'tool_failed', message: 'denied' } }],
    ]);
    const ctx = prepareRuleContext(t, coding);
    expect([...ctx.changesState]).toEqual([1, 0, 1, 0]);
    expect([...ctx.errored]).toEqual([0, 0, 0, 1]);
    expect(ctx.referenceSteps).toBe(coding.stepBudget);
  });

  it('rejects a reference length that is not a positive number', () => {
    const t = trajectory([['submit', {}]]);
    expect(() => prepareRuleContext(t, coding, 0)).toThrow(ConfigError);
    expect(() => prepareRuleContext(t, coding, Number.NaN)).toThrow(/referenceSteps must be a finite number > 0/);
  });
});

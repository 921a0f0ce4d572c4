import { describe, expect, it } from 'vitest';
import { ENV_ID_PATTERN } from '../core/registry.js';
import { adapterNames, ADAPTERS, getAdapter } from './registry.js';

describe('adapter registry', () => {
  it('has unique names and external env ids in the registry id format', () => {
    expect(new Set(adapterNames()).size).toBe(ADAPTERS.length);
    for (const a of ADAPTERS) {
      if (a.envId !== undefined) {
        expect(a.envId).toMatch(ENV_ID_PATTERN);
        expect(a.envId.startsWith('external/')).toBe(true);
      }
    }
    expect(getAdapter('claude-code')?.envId).toBe('external/claude-code-v0');
    expect(getAdapter('nope')).toBeUndefined();
  });
});

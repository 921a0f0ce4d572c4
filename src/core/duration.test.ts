import { describe, expect, it } from 'vitest';
import { DURATION_PATTERN, durationMs } from './duration.js';

describe('durationMs', () => {
  it('reads every unit, decimals and a space before the unit', () => {
    expect(durationMs('250ms')).toBe(250);
    expect(durationMs('90s')).toBe(90_000);
    expect(durationMs('2m')).toBe(120_000);
    expect(durationMs('1.5h')).toBe(5_400_000);
    expect(durationMs('2d')).toBe(172_800_000);
    expect(durationMs('30 m')).toBe(1_800_000);
  });

  it('is NaN for anything else', () => {
    for (const bad of ['', '90', '1w', '-1s', ' 90s', '90s ', '1e3s', 'soon']) {
      expect(durationMs(bad)).toBeNaN();
      expect(DURATION_PATTERN.test(bad)).toBe(false);
    }
  });
});

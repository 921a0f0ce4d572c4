import { afterEach, describe, expect, it } from 'vitest';
import { clearFaults, faultCounts, injectFault, installFaultsFromEnv, InjectedFault, parseFaultPlan } from './faults.js';

describe('fault injection (test-only)', () => {
  afterEach(() => clearFaults());

  it('is off without GYMFLOW_FAULTS: nothing is ever injected', () => {
    expect(installFaultsFromEnv({})).toBeUndefined();
    for (let i = 0; i < 1000; i++) injectFault('sandbox.exec');
    expect(faultCounts()).toEqual({});
  });

  it('injects at about the configured rate, and says the fault was injected', () => {
    expect(installFaultsFromEnv({ GYMFLOW_FAULTS: 'sandbox.exec=0.25,seed=3' })).toEqual({ rates: { 'sandbox.exec': 0.25 }, seed: 3 });
    let thrown = 0;
    for (let i = 0; i < 4000; i++) {
      try {
        injectFault('sandbox.exec');
      } catch (err) {
        expect(err).toBeInstanceOf(InjectedFault);
        expect((err as Error).message).toMatch(/injected fault at sandbox\.exec \(GYMFLOW_FAULTS, test-only\)/);
        thrown++;
      }
    }
    expect(thrown).toBeGreaterThan(850);
    expect(thrown).toBeLessThan(1150);
    expect(faultCounts()).toEqual({ 'sandbox.exec': { calls: 4000, injected: thrown } });
  });

  it('rejects a bad value, naming the item and what is wrong', () => {
    expect(() => parseFaultPlan('sandbox.exec=1.5')).toThrow("GYMFLOW_FAULTS item 'sandbox.exec=1.5': the rate must be a number in [0, 1]");
    expect(() => parseFaultPlan('judge=0.3')).toThrow("unknown fault point 'judge' (known: sandbox.exec)");
    expect(() => parseFaultPlan('seed=x')).toThrow("GYMFLOW_FAULTS item 'seed=x': the seed must be an integer");
    expect(() => parseFaultPlan('sandbox.exec')).toThrow('expected point=rate or seed=N');
    expect(() => parseFaultPlan('sandbox.exec=')).toThrow('the rate must be a number in [0, 1]');
  });
});

import { describe, expect, it } from 'vitest';
import { FAULT_CANDIDATES, FAULT_KINDS, HELDOUT_COMBINATIONS, namedKind, rootCauseMatches, SERVICE_CATALOG } from './fleet.js';

const FLEET = ['gateway', 'checkout', 'search', 'payments', 'postgres'];

describe('the fleet catalogue', () => {
  it('names only catalogue services as dependencies and fault candidates; held-out combinations are candidates', () => {
    const names = new Set(SERVICE_CATALOG.map((s) => s.name));
    for (const s of SERVICE_CATALOG) for (const d of s.dependsOn) expect(names.has(d), `${s.name} -> ${d}`).toBe(true);
    for (const k of FAULT_KINDS) {
      for (const s of FAULT_CANDIDATES[k]) expect(names.has(s)).toBe(true);
      expect(HELDOUT_COMBINATIONS[k].length).toBeGreaterThan(0);
      for (const s of HELDOUT_COMBINATIONS[k]) expect(FAULT_CANDIDATES[k]).toContain(s);
      // Training keeps at least two services of every kind.
      expect(FAULT_CANDIDATES[k].length - HELDOUT_COMBINATIONS[k].length).toBeGreaterThanOrEqual(2);
    }
  });
});

describe('reading a stated root cause', () => {
  const fault = { kind: 'saturated_dependency' as const, service: 'payments' };

  it('accepts the structured form and an explanation that names the faulty service and its kind first', () => {
    expect(rootCauseMatches('payments: saturated_dependency', fault, FLEET)).toBe(true);
    expect(rootCauseMatches('Payments was overloaded (CPU at 99%), so checkout timed out calling it', fault, FLEET)).toBe(true);
    expect(namedKind('the v2.14.0 deploy of checkout')).toBe('bad_deploy');
    expect(namedKind('checkout db_pool_size config lowered to 2')).toBe('config_change');
    expect(namedKind('a connection leak in accounts')).toBe('connection_leak');
    expect(namedKind('kafka: disk_full')).toBe('disk_full');
  });

  it('refuses the wrong service, the wrong kind, a hedge, a victim named first, and nothing at all', () => {
    expect(rootCauseMatches('checkout: saturated_dependency', fault, FLEET)).toBe(false);
    expect(rootCauseMatches('payments: bad_deploy', fault, FLEET)).toBe(false);
    expect(rootCauseMatches('checkout or payments: saturated_dependency', fault, FLEET)).toBe(false);
    expect(rootCauseMatches('checkout timed out because payments is saturated', fault, FLEET)).toBe(false);
    expect(rootCauseMatches('unknown', fault, FLEET)).toBe(false);
    // A service outside the fleet is not a service of this incident.
    expect(rootCauseMatches('inventory, then payments: saturated_dependency', fault, FLEET)).toBe(true);
  });
});

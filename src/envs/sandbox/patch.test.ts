import { describe, expect, it } from 'vitest';
import { applyUnifiedDiff } from './patch.js';

describe('applyUnifiedDiff', () => {
  const base = { 'a.py': 'one\ntwo\nthree\nfour\n' };

  it('applies a modification, keeping the other lines', () => {
    const diff = ['--- a/a.py', '+++ b/a.py', '@@ -2,2 +2,2 @@', ' two', '-three', '+THREE', ''].join('\n');
    expect(applyUnifiedDiff(base, diff).get('a.py')).toBe('one\ntwo\nTHREE\nfour\n');
  });

  it('creates and deletes files', () => {
    const diff = [
      'diff --git a/new.py b/new.py', 'new file mode 100644', '--- /dev/null', '+++ b/new.py', '@@ -0,0 +1,2 @@', '+x = 1', '+y = 2',
      'diff --git a/a.py b/a.py', 'deleted file mode 100644', '--- a/a.py', '+++ /dev/null', '@@ -1,4 +0,0 @@', '-one', '-two', '-three', '-four', '',
    ].join('\n');
    const out = applyUnifiedDiff(base, diff);
    expect(out.get('new.py')).toBe('x = 1\ny = 2\n');
    expect(out.get('a.py')).toBeNull();
  });

  it('finds a hunk whose line number moved, and names a hunk that does not apply', () => {
    const moved = ['--- a/a.py', '+++ b/a.py', '@@ -1,1 +1,1 @@', '-three', '+3', ''].join('\n');
    expect(applyUnifiedDiff(base, moved).get('a.py')).toBe('one\ntwo\n3\nfour\n');
    const bad = ['--- a/a.py', '+++ b/a.py', '@@ -1,1 +1,1 @@', '-five', '+5', ''].join('\n');
    expect(() => applyUnifiedDiff(base, bad, 'x.patch')).toThrow(/x.patch: hunk 1 of a.py does not apply/);
  });
});

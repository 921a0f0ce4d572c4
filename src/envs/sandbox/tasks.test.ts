import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { applyUnifiedDiff } from './patch.js';
import { builtinTasks, loadTasks } from './tasks.js';
import { USER_TASK } from './__fixtures__/user-task.js';

describe('sandbox tasks', () => {
  it('ships at least 20 valid tasks with both splits, F2P tests and applicable patches', () => {
    const tasks = builtinTasks();
    expect(tasks.length).toBeGreaterThanOrEqual(20);
    expect(new Set(tasks.map((t) => t.split))).toEqual(new Set(['train', 'heldout']));
    for (const t of tasks) {
      expect(t.failToPass.length, t.id).toBeGreaterThan(0);
      const fixed = applyUnifiedDiff(t.files, t.patch);
      expect(fixed.size, t.id).toBeGreaterThan(0);
      // The reference fix changes code, not tests; the test patch adds every F2P test's file.
      for (const path of fixed.keys()) expect(path, t.id).not.toMatch(/^tests\//);
      for (const id of t.failToPass) expect(Object.keys(t.testFiles), t.id).toContain(id.split('::')[0]);
    }
    expect(tasks.filter((t) => applyUnifiedDiff(t.files, t.patch).size > 1).length).toBeGreaterThanOrEqual(3);
  });

  it('reads user tasks with inline files and SWE-bench string-encoded test lists; errors name the line', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gymflow-tasks-'));
    const file = join(dir, 'tasks.jsonl');
    // SWE-bench writes the test lists as JSON strings.
    const line = { ...USER_TASK, FAIL_TO_PASS: '["test_m.py::test_f"]', PASS_TO_PASS: '[]' };
    writeFileSync(file, `${JSON.stringify(line)}\n`);
    const [t] = loadTasks(file);
    expect(t).toMatchObject({ id: 'mine-1', failToPass: ['test_m.py::test_f'], passToPass: [], split: 'train' });
    expect(t?.testFiles['test_m.py']).toContain('assert f() == 2');
    writeFileSync(file, `${JSON.stringify(line)}\n${JSON.stringify({ ...line, instance_id: 'x', files: undefined })}\n`);
    expect(() => loadTasks(file)).toThrow(/tasks.jsonl:2 .*give exactly one of repo, files/);
  });

  it('refuses file paths outside the work directory at load time, naming the line and the field', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gymflow-tasks-'));
    const file = join(dir, 'tasks.jsonl');
    const ok = { instance_id: 'p', problem_statement: 'x', files: { 'a.py': 'A = 1\n' }, FAIL_TO_PASS: [] };
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ files: { 'a.py': '', '../../evil.py': 'x' } }, /tasks.jsonl:2 \$\.files\["\.\.\/\.\.\/evil\.py"\]: path leaves the work directory/],
      [{ files: { '/abs.py': 'x' } }, /tasks.jsonl:2 \$\.files\["\/abs\.py"\]: absolute path/],
      [{ files: { 'a//b.py': 'x' } }, /tasks.jsonl:2 \$\.files\["a\/\/b\.py"\]: path has an empty/],
      [{ test_patch: '--- /dev/null\n+++ b/../t.py\n@@ -0,0 +1 @@\n+x\n' }, /tasks.jsonl:2 \$\.test_patch: file "\.\.\/t\.py": path leaves the work directory/],
    ];
    for (const [change, message] of cases) {
      writeFileSync(file, `${JSON.stringify(ok)}\n${JSON.stringify({ ...ok, instance_id: 'q', ...change })}\n`);
      expect(() => loadTasks(file)).toThrow(message);
    }
  });

  it('names the tasks file, repo or patch file it cannot read', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gymflow-tasks-'));
    expect(() => loadTasks(join(dir, 'missing.jsonl'))).toThrow(/missing\.jsonl: cannot read the tasks file: no such file or directory/);
    expect(() => loadTasks(dir)).toThrow(/cannot read the tasks file: is a directory/);
    const file = join(dir, 'tasks.jsonl');
    writeFileSync(file, `${JSON.stringify({ instance_id: 'p', problem_statement: 'x', repo: 'nope', FAIL_TO_PASS: [] })}\n`);
    expect(() => loadTasks(file)).toThrow(/tasks.jsonl:1 \$\.repo: cannot read .*nope: no such file or directory/);
    writeFileSync(file, `${JSON.stringify({ instance_id: 'p', problem_statement: 'x', files: {}, patch_file: 'fix.diff', FAIL_TO_PASS: [] })}\n`);
    expect(() => loadTasks(file)).toThrow(/tasks.jsonl:1 \$\.patch_file: cannot read .*fix\.diff: no such file or directory/);
  });
});

/**
 * A user task with inline files, as a line of a tasks JSONL file (docs/sandbox.md): `f` returns 1, the fix
 * makes it return 2, and the hidden test checks that.
 */
export const USER_TASK = {
  instance_id: 'mine-1',
  problem_statement: 'fix f',
  files: { 'm.py': 'def f():\n    return 1\n' },
  patch: '--- a/m.py\n+++ b/m.py\n@@ -1,2 +1,2 @@\n def f():\n-    return 1\n+    return 2\n',
  test_patch: '--- /dev/null\n+++ b/test_m.py\n@@ -0,0 +1,3 @@\n+from m import f\n+def test_f():\n+    assert f() == 2\n',
  FAIL_TO_PASS: ['test_m.py::test_f'],
};

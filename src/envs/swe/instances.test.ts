import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { diffFileKinds, diffFiles, loadInstances, selectInstances } from './instances.js';
import { loadPredictions } from './predictions.js';

const dir = mkdtempSync(join(tmpdir(), 'swe-instances-'));
const sha = 'a'.repeat(40);
const line = (over: Record<string, unknown> = {}): Record<string, unknown> => ({
  instance_id: 'acme__calc-1',
  repo: 'acme/calc',
  base_commit: sha,
  patch: 'diff --git a/x.py b/x.py\n',
  test_patch: '',
  FAIL_TO_PASS: '["tests/test_x.py::test_a[1-2]"]',
  PASS_TO_PASS: '[]',
  version: '1.0',
  environment_setup_commit: sha,
  problem_statement: 'fix it',
  hints_text: '',
  created_at: '2024-01-01T00:00:00Z',
  ...over,
});
const write = (name: string, text: string): string => {
  const f = join(dir, name);
  writeFileSync(f, text);
  return f;
};

describe('loadInstances', () => {
  it('reads JSON lines and JSON arrays of SWE-bench instances; test lists may be JSON strings (as published) or arrays', () => {
    const jsonl = write('a.jsonl', `${JSON.stringify(line())}\n\n${JSON.stringify(line({ instance_id: 'acme__calc-2', FAIL_TO_PASS: ['t::b'], split: 'train' }))}\n`);
    const got = loadInstances(jsonl);
    expect(got.map((i) => [i.instanceId, i.failToPass, i.split, i.version, i.source])).toEqual([
      ['acme__calc-1', ['tests/test_x.py::test_a[1-2]'], 'heldout', '1.0', `${jsonl}:1`],
      ['acme__calc-2', ['t::b'], 'train', '1.0', `${jsonl}:3`],
    ]);
    const json = write('a.json', JSON.stringify([line()]));
    expect(loadInstances(json, { split: 'train' })[0]).toMatchObject({ instanceId: 'acme__calc-1', split: 'train', source: `${json}[0]`, environmentSetupCommit: sha });
  });

  it('selects instances by id in file order; an unknown id names the option and the file', () => {
    const all = loadInstances(write('s.jsonl', [line(), line({ instance_id: 'acme__calc-2' }), line({ instance_id: 'acme__calc-3' })].map((l) => JSON.stringify(l)).join('\n')));
    expect(selectInstances(all, undefined, '--instance-ids', 's.jsonl')).toBe(all);
    expect(selectInstances(all, ['acme__calc-3', 'acme__calc-1'], '--instance-ids', 's.jsonl').map((i) => i.instanceId)).toEqual(['acme__calc-1', 'acme__calc-3']);
    expect(() => selectInstances(all, ['acme__calc-1', 'x', 'y'], '--instance-ids', 's.jsonl')).toThrow('--instance-ids: not in s.jsonl: x, y');
  });

  it('names the file, the line and the field of a bad instance', () => {
    const f = (name: string, ...lines: unknown[]): string => write(name, lines.map((l) => JSON.stringify(l)).join('\n'));
    expect(() => loadInstances(f('b1.jsonl', line(), line({ base_commit: 'main' })))).toThrow(/b1\.jsonl:2 \$\.base_commit: expected a commit id/);
    const { repo: _r, ...noRepo } = line();
    expect(() => loadInstances(f('b2.jsonl', noRepo))).toThrow(/b2\.jsonl:1 \$\.repo: missing/);
    expect(() => loadInstances(f('b3.jsonl', line({ version: 3.0 })))).toThrow(/b3\.jsonl:1 \$\.version: expected a string like "3\.0"/);
    expect(() => loadInstances(f('b4.jsonl', line({ FAIL_TO_PASS: 'not json' })))).toThrow(/b4\.jsonl:1 \$\.FAIL_TO_PASS: expected a JSON array of test ids/);
    expect(() => loadInstances(f('b5.jsonl', line(), line()))).toThrow(/b5\.jsonl:2 \$\.instance_id: duplicate 'acme__calc-1' \(first at .*b5\.jsonl:1\)/);
    expect(() => loadInstances(write('b6.jsonl', '{"instance_id":'))).toThrow(/b6\.jsonl:1: not JSON/);
    expect(() => loadInstances(join(dir, 'missing.jsonl'))).toThrow(/missing\.jsonl: cannot read the instances file: no such file or directory/);
    expect(() => loadInstances(write('b7.jsonl', '\n'))).toThrow(/b7\.jsonl: no instances/);
  });
});

describe('diffs', () => {
  const diff = [
    'diff --git a/tests/test_a.py b/tests/test_a.py',
    'index 1..2 100644',
    '--- a/tests/test_a.py',
    '+++ b/tests/test_a.py',
    '@@ -1 +1 @@',
    '-x',
    '+y',
    'diff --git a/tests/test_new.py b/tests/test_new.py',
    'new file mode 100644',
    '--- /dev/null',
    '+++ b/tests/test_new.py',
    '@@ -0,0 +1 @@',
    '+z',
    '',
  ].join('\n');
  it('lists the files a diff touches, and which it creates', () => {
    expect(diffFiles(diff)).toEqual(['tests/test_a.py', 'tests/test_new.py']);
    expect(diffFileKinds(diff)).toEqual({ created: ['tests/test_new.py'], existing: ['tests/test_a.py'] });
  });
});

describe('loadPredictions', () => {
  const p = { instance_id: 'acme__calc-1', model_name_or_path: 'm', model_patch: 'diff' };
  it('reads JSON lines, a JSON array, and an object keyed by instance id; a null patch is kept', () => {
    expect(loadPredictions(write('p1.jsonl', `${JSON.stringify(p)}\n${JSON.stringify({ ...p, instance_id: 'b', model_patch: null })}\n`))).toEqual([p, { ...p, instance_id: 'b', model_patch: null }]);
    expect(loadPredictions(write('p2.json', JSON.stringify([p])))).toEqual([p]);
    expect(loadPredictions(write('p3.json', JSON.stringify({ 'acme__calc-1': p })))).toEqual([p]);
  });
  it('names the place of a bad prediction', () => {
    expect(() => loadPredictions(write('p4.jsonl', `${JSON.stringify(p)}\n${JSON.stringify({ instance_id: 'x', model_patch: '' })}\n`))).toThrow(/p4\.jsonl:2 \$\.model_name_or_path: missing/);
    expect(() => loadPredictions(write('p5.jsonl', `${JSON.stringify(p)}\n${JSON.stringify(p)}\n`))).toThrow(/p5\.jsonl:2 \$\.instance_id: 'acme__calc-1' is predicted twice/);
    expect(() => loadPredictions(join(dir, 'none.jsonl'))).toThrow(/none\.jsonl: cannot read the predictions file: no such file or directory/);
    expect(() => loadPredictions(dir)).toThrow(/: cannot read the predictions file: is a directory/);
    expect(() => loadPredictions(write('p6.json', '[{"instance_id":'))).toThrow(/p6\.json: not JSON/);
    expect(() => loadPredictions(write('p7.jsonl', '\n'))).toThrow(/p7\.jsonl: no predictions/);
  });
});

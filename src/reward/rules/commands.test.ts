import { describe, expect, it } from 'vitest';
import { analyseCommand, analyseShell, gitDiscard, normalisePath } from './commands.js';

describe('command analysis', () => {
  it('recognises read-only commands', () => {
    expect(analyseShell('cd repo && cat a.py | head -5').readOnly).toBe(true);
    expect(analyseShell('grep -rn foo src 2>/dev/null').readOnly).toBe(true);
    expect(analyseShell('git status').readOnly).toBe(true);
    expect(analyseShell("sed -n '1,5p' a.py").readOnly).toBe(true);
  });

  it('assumes anything else may change state', () => {
    expect(analyseShell('pytest -q').readOnly).toBe(false);
    expect(analyseShell('echo x > a.py').readOnly).toBe(false);
    expect(analyseShell('sed -i s/a/b/ a.py').readOnly).toBe(false);
    expect(analyseShell('find . -name "*.pyc" -delete').readOnly).toBe(false);
    expect(analyseShell('cat a.py; rm a.py').readOnly).toBe(false);
    expect(analyseShell('git commit -am x').readOnly).toBe(false);
  });

  it('finds git invocations, skipping global options and env assignments', () => {
    expect(analyseShell('cd r && GIT_PAGER=cat git -C sub checkout -- a.py').git).toEqual([{ subcommand: 'checkout', args: ['--', 'a.py'] }]);
    expect(analyseCommand('git', { subcommand: 'reset', args: ['--hard'] })).toEqual({ readOnly: false, git: [{ subcommand: 'reset', args: ['--hard'] }] });
    expect(analyseCommand('bash', { command: ['git', 'status'] }).readOnly).toBe(true);
    expect(analyseCommand('calculator', { expression: '1+1' })).toEqual({ readOnly: false, git: [] });
  });

  it('classifies what a git command discards', () => {
    expect(gitDiscard({ subcommand: 'checkout', args: ['--', './a.py', 'b.py'] })).toEqual({ kind: 'paths', paths: ['a.py', 'b.py'] });
    expect(gitDiscard({ subcommand: 'checkout', args: ['HEAD', 'a.py'] })).toEqual({ kind: 'paths', paths: ['HEAD', 'a.py'] });
    expect(gitDiscard({ subcommand: 'restore', args: ['.'] })).toEqual({ kind: 'all' });
    expect(gitDiscard({ subcommand: 'restore', args: ['--staged', 'a.py'] })).toEqual({ kind: 'none' });
    expect(gitDiscard({ subcommand: 'reset', args: ['--hard', 'HEAD'] })).toEqual({ kind: 'all' });
    expect(gitDiscard({ subcommand: 'reset', args: ['HEAD~1'] })).toEqual({ kind: 'none' });
    expect(gitDiscard({ subcommand: 'stash', args: [] })).toEqual({ kind: 'all' });
    expect(gitDiscard({ subcommand: 'stash', args: ['pop'] })).toEqual({ kind: 'none' });
    expect(gitDiscard({ subcommand: 'clean', args: ['-fd'] })).toEqual({ kind: 'all' });
    expect(gitDiscard({ subcommand: 'commit', args: ['-m', 'x'] })).toEqual({ kind: 'commit' });
    expect(gitDiscard({ subcommand: 'log', args: [] })).toEqual({ kind: 'none' });
  });

  it('normalises ./ prefixes', () => {
    expect(normalisePath('././a/b.py')).toBe('a/b.py');
    expect(normalisePath('/abs/x')).toBe('/abs/x');
  });
});

import { describe, expect, it } from 'vitest';
import type { PythonCallResult } from './python-runner.js';
import { fromPythonRepr, parsePythonValue, pythonCallError, pythonObservation, pythonToolSpec } from './python-tool.js';

const LIMITS = { timeoutS: 5, memoryMiB: 512, outputCapBytes: 8192 };
const ok = (fields: Partial<PythonCallResult>): PythonCallResult => ({ status: 'ok', stdout: '', stderr: '', restarted: false, ...fields });

describe('python tool observations', () => {
  it('shows stdout, stderr and the value, each only when there is one', () => {
    expect(pythonObservation(ok({ value: '42' }), LIMITS)).toBe('value: 42');
    expect(pythonObservation(ok({ stdout: 'a\nb\n', stderr: 'warn\n', value: "'x'" }), LIMITS)).toBe("stdout:\na\nb\nstderr:\nwarn\nvalue: 'x'");
    expect(pythonObservation(ok({}), LIMITS)).toBe('(no output)');
    expect(pythonCallError(ok({ value: '1' }), LIMITS)).toBeUndefined();
  });

  it('starts failed calls with an Error line that says what happened, then the output and the traceback', () => {
    const raised: PythonCallResult = {
      status: 'error',
      stdout: 'before\n',
      stderr: '',
      restarted: false,
      error: { type: 'ZeroDivisionError', message: 'division by zero', traceback: 'Traceback (most recent call last):\n  File "<python-1>", line 2, in <module>\nZeroDivisionError: division by zero\n' },
    };
    expect(pythonObservation(raised, LIMITS)).toBe(
      'Error: python: ZeroDivisionError: division by zero\nstdout:\nbefore\nTraceback (most recent call last):\n  File "<python-1>", line 2, in <module>\nZeroDivisionError: division by zero',
    );
    expect(pythonCallError(raised, LIMITS)).toEqual({ code: 'tool_failed', message: 'python: ZeroDivisionError: division by zero' });
    const memory = { ...raised, error: { type: 'MemoryError', message: '', traceback: 'MemoryError\n' } };
    expect(pythonCallError(memory, LIMITS)?.message).toBe('python: MemoryError (the memory limit is 512 MiB)');
    expect(pythonObservation({ status: 'timeout', stdout: 'tick\n', stderr: '', restarted: true }, LIMITS)).toBe(
      'Error: python: the code ran longer than 5 s and was stopped. The interpreter was restarted: variables from earlier calls in this episode are gone.\nstdout:\ntick',
    );
    expect(pythonCallError({ status: 'died', stdout: '', stderr: '', restarted: true, message: 'the interpreter exited (killed by signal SIGKILL)' }, LIMITS)?.message).toMatch(
      /^python: the interpreter exited \(killed by signal SIGKILL\)\. The interpreter was restarted/,
    );
  });

  it('marks a missing sandbox as unavailable, not as the code failing', () => {
    const r: PythonCallResult = { status: 'unavailable', stdout: '', stderr: '', restarted: false, message: 'no Docker engine' };
    expect(pythonCallError(r, LIMITS)).toEqual({ code: 'tool_unavailable', message: 'python: unavailable: no Docker engine' });
  });

  it('reads the value back, and a string repr as the string', () => {
    expect(parsePythonValue('value: 42.5')).toBe('42.5');
    expect(parsePythonValue("stdout:\nvalue: printed\nvalue: 'Velmora'")).toBe("'Velmora'");
    expect(parsePythonValue('stdout:\nhello')).toBeUndefined();
    expect(parsePythonValue('Error: python: NameError: x\nvalue: 1')).toBeUndefined();
    expect(fromPythonRepr("'Velmora'")).toBe('Velmora');
    expect(fromPythonRepr('"Ostravel\'s"')).toBe("Ostravel's");
    expect(fromPythonRepr("'a\\\\b\\'c'")).toBe("a\\b'c");
    expect(fromPythonRepr('1234.5')).toBe('1234.5');
  });

  it('declares a strict schema and states its limits', () => {
    const spec = pythonToolSpec(LIMITS);
    expect(spec).toMatchObject({ name: 'python', category: 'execute', parameters: { required: ['code'], additionalProperties: false } });
    expect(spec.description).toMatch(/5 s and 512 MiB per call/);
  });
});

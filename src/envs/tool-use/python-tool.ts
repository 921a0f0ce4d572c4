import type { ActionErrorInfo, ToolSpec } from '../../core/types.js';
import type { PythonCallResult, PythonLimits } from './python-runner.js';

/**
 * The `python` tool of `gymflow/tool-use-python-v0`: its spec and how a call's result reads as an observation.
 *
 * Observation of a call that ran (sections only when not empty; `(no output)` when all are):
 *
 * ```text
 * stdout:
 * 3 rows
 * stderr:
 * a warning
 * value: 42.5
 * ```
 *
 * A call that raised, ran out of time or killed its interpreter starts with `Error: python: …` (what went wrong),
 * followed by the output it made and, for an exception, the traceback of the code's own frames.
 */

/** The tool's spec (category `execute`, like the calculator). */
export function pythonToolSpec(limits: Pick<PythonLimits, 'timeoutS' | 'memoryMiB' | 'outputCapBytes'>): ToolSpec {
  return {
    name: 'python',
    description:
      `Run Python 3 code in a sandbox (standard library only, no network, no files but your own; ${limits.timeoutS} s and ${limits.memoryMiB} MiB per call). ` +
      `Returns stdout, stderr and the value of the last line when it is an expression. Variables persist across calls within the episode. ` +
      `Output is cut at ${limits.outputCapBytes} bytes per stream.`,
    category: 'execute',
    parameters: {
      type: 'object',
      properties: { code: { type: 'string', minLength: 1, description: 'e.g. "import statistics\\nstatistics.median([3, 1, 2])"' } },
      required: ['code'],
      additionalProperties: false,
    },
  };
}

function sections(r: PythonCallResult): string[] {
  const out: string[] = [];
  if (r.stdout) out.push(`stdout:\n${r.stdout.replace(/\n$/, '')}`);
  if (r.stderr) out.push(`stderr:\n${r.stderr.replace(/\n$/, '')}`);
  return out;
}

const RESTARTED = 'The interpreter was restarted: variables from earlier calls in this episode are gone.';

/** What went wrong in a call that did not run to its end, or `undefined` when it did. */
export function pythonCallError(r: PythonCallResult, limits: Pick<PythonLimits, 'timeoutS' | 'memoryMiB'>): ActionErrorInfo | undefined {
  switch (r.status) {
    case 'ok':
      return undefined;
    case 'error': {
      const type = r.error?.type ?? 'Exception';
      const detail = r.error?.message ? `${type}: ${r.error.message}` : type;
      const hint = type === 'MemoryError' ? ` (the memory limit is ${limits.memoryMiB} MiB)` : '';
      return { code: 'tool_failed', message: `python: ${detail}${hint}` };
    }
    case 'timeout':
      return { code: 'tool_failed', message: `python: the code ran longer than ${limits.timeoutS} s and was stopped. ${RESTARTED}` };
    case 'died':
      return { code: 'tool_failed', message: `python: ${r.message ?? 'the interpreter exited'}. ${RESTARTED}` };
    case 'unavailable':
      return { code: 'tool_unavailable', message: `python: unavailable: ${r.message ?? 'no sandbox'}` };
    case 'failed':
      return { code: 'tool_unavailable', message: `python: the sandbox failed (${r.message ?? 'unknown'}); the next call starts a new one` };
  }
}

/** The observation text of a call (see the module comment). */
export function pythonObservation(r: PythonCallResult, limits: Pick<PythonLimits, 'timeoutS' | 'memoryMiB'>): string {
  const error = pythonCallError(r, limits);
  const parts = sections(r);
  if (error === undefined) {
    if (r.restarted && r.message) parts.push(`note: ${r.message}. ${RESTARTED}`);
    if (r.value !== undefined) parts.push(`value: ${r.value}`);
    return parts.length > 0 ? parts.join('\n') : '(no output)';
  }
  const head = `Error: ${error.message}`;
  if (r.status === 'error' && r.error?.traceback) parts.push(r.error.traceback.replace(/\n$/, ''));
  return [head, ...parts].join('\n');
}

/** The `value:` of a python observation (the repr of the last expression), or `undefined` when it has none. */
export function parsePythonValue(observation: string): string | undefined {
  if (observation.startsWith('Error:')) return undefined;
  // The value is the last section (a repr is one line): its last `value: ` line, not one the code printed.
  if (observation.startsWith('value: ')) return observation.slice('value: '.length);
  const at = observation.lastIndexOf('\nvalue: ');
  return at < 0 ? undefined : observation.slice(at + '\nvalue: '.length);
}

/**
 * A Python `repr` of a string (`'Velmora'`, `"Ostravel's"`, with the escapes `\\`, `\'`, `\"`, `\n`, `\t`) as the
 * string; other text (a number's repr) as it is.
 */
export function fromPythonRepr(repr: string): string {
  const m = /^(['"])(.*)\1$/s.exec(repr);
  if (!m) return repr;
  return (m[2] ?? '').replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c === 't' ? '\t' : c));
}

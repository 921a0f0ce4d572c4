/**
 * Per-test status from a test log, one parser per test framework — the rules of SWE-bench's harness
 * (`swebench/harness/log_parsers/python.py`), so that the FAIL_TO_PASS / PASS_TO_PASS ids of the data set, which
 * were made with those parsers, match what these find.
 */

/** A test's status as the harness records it (SWE-bench's `TestStatus`). */
export type TestStatus = 'PASSED' | 'FAILED' | 'SKIPPED' | 'ERROR' | 'XFAIL';

/** Test id → status. */
export type StatusMap = Map<string, TestStatus>;

const STATUSES: readonly TestStatus[] = ['FAILED', 'PASSED', 'SKIPPED', 'ERROR', 'XFAIL'];
const STATUS_ALT = STATUSES.join('|');
const STATUS_FIRST = new RegExp(`^(${STATUS_ALT})\\s+(\\S+)`);
const TEST_FIRST = new RegExp(`^(\\S+)\\s+(${STATUS_ALT})(?:\\s|$)`);

/**
 * One pytest result line: `-rA`'s summary (`PASSED tests/test_a.py::test_x[1-2]`, `FAILED path::test - message`,
 * `ERROR path::test - message`, `XFAIL …`) or the verbose form (`path::test PASSED [ 50%]`). A test id is taken up
 * to the first space, as the harness does (so a parametrised id with a space in it is cut there, in the data set
 * too); the skip summary `SKIPPED [1] path:line: reason` names no test and is ignored.
 */
function pytestLine(line: string): [string, TestStatus] | undefined {
  const first = STATUS_FIRST.exec(line);
  if (first) {
    const status = first[1] as TestStatus;
    let test = first[2] as string;
    if (status === 'FAILED') test = line.replaceAll(' - ', ' ').split(/\s+/)[1] ?? test;
    if (status === 'SKIPPED' && /^\[\d+\]/.test(test)) return undefined;
    return [test, status];
  }
  const last = TEST_FIRST.exec(line);
  if (last) return [last[1] as string, last[2] as TestStatus];
  return undefined;
}

/** pytest (`-rA` summary or `-v` lines). */
export function parsePytest(log: string): StatusMap {
  const map: StatusMap = new Map();
  for (const line of log.split('\n')) {
    const r = pytestLine(line);
    if (r) map.set(r[0], r[1]);
  }
  return map;
}

/**
 * pytest with options in the ids (`test_x[/abs/path/file]`): an option that is an absolute path keeps only its
 * last component, so ids do not depend on where the repository lives (SWE-bench's `parse_log_pytest_options`).
 */
export function parsePytestOptions(log: string): StatusMap {
  const map: StatusMap = new Map();
  for (const line of log.split('\n')) {
    const r = pytestLine(line);
    if (!r) continue;
    let [test] = r;
    const m = /^(.*?)\[(.*)\]/.exec(test);
    if (m) {
      let option = m[2] as string;
      if (option.startsWith('/') && !option.startsWith('//') && !option.includes('*')) option = `/${option.split('/').pop() ?? ''}`;
      test = `${m[1] as string}[${option}]`;
    }
    map.set(test, r[1]);
  }
  return map;
}

/** pytest with colours: ANSI colour codes and control characters are removed first (`parse_log_pytest_v2`). */
export function parsePytestV2(log: string): StatusMap {
  const map: StatusMap = new Map();
  for (const raw of log.split('\n')) {
    // eslint-disable-next-line no-control-regex
    const line = raw.replace(/\[(\d+)m/g, '').replace(/[\x01-\x1f]/g, '');
    const r = pytestLine(line);
    if (r) map.set(r[0], r[1]);
  }
  return map;
}

/**
 * Django's test runner and unittest's verbose output (`test_x (module.Class.test_x) ... ok`, `... FAIL`,
 * `... ERROR`, `... skipped 'why'`, and the `FAIL: name` / `ERROR: name` headers of the failure report), as
 * SWE-bench's `parse_log_django` reads them; `ok` on a later line counts for the last test that printed ` ... `.
 */
export function parseDjango(log: string): StatusMap {
  const map: StatusMap = new Map();
  let prev: string | undefined;
  for (const raw of log.split('\n')) {
    let line = raw.trim();
    if (line.includes('--version is equivalent to version')) map.set('--version is equivalent to version', 'PASSED');
    if (line.includes(' ... ')) prev = line.split(' ... ')[0];
    for (const suffix of [' ... ok', ' ... OK', ' ...  OK']) {
      if (line.endsWith(suffix)) {
        if (line.startsWith('Applying sites.0002_alter_domain_unique...test_no_migrations')) line = (line.split('...').slice(1).join('...')).trim();
        map.set(line.slice(0, line.lastIndexOf(suffix)), 'PASSED');
        break;
      }
    }
    if (line.includes(' ... skipped')) map.set(line.split(' ... skipped')[0] as string, 'SKIPPED');
    if (line.endsWith(' ... FAIL')) map.set(line.split(' ... FAIL')[0] as string, 'FAILED');
    if (line.startsWith('FAIL:')) map.set((line.split(/\s+/)[1] ?? '').trim(), 'FAILED');
    if (line.endsWith(' ... ERROR')) map.set(line.split(' ... ERROR')[0] as string, 'ERROR');
    if (line.startsWith('ERROR:')) map.set((line.split(/\s+/)[1] ?? '').trim(), 'ERROR');
    if (line.startsWith('ok') && prev !== undefined) map.set(prev, 'PASSED');
  }
  // A long multi-line message printed between a test's name and its `ok`.
  const interrupted = [
    /^(.*?)\s\.\.\.\sTesting against Django installed in ([\s\S]*?) silenced\)\.\nok$/gm,
    /^(.*?)\s\.\.\.\sInternal Server Error: \/(.*)\/\nok$/gm,
    /^(.*?)\s\.\.\.\sSystem check identified no issues \(0 silenced\)\nok$/gm,
  ];
  for (const re of interrupted) for (const m of log.matchAll(re)) map.set(m[1] as string, 'PASSED');
  return map;
}

/** SymPy's `bin/test` (`test_x ok`, `test_y F`, `test_z E`, and `____ path.py:test ____` failure headers). */
export function parseSympy(log: string): StatusMap {
  const map: StatusMap = new Map();
  for (const m of log.matchAll(/(_*) (.*)\.py:(.*) (_*)/g)) map.set(`${m[2] as string}.py:${m[3] as string}`, 'FAILED');
  for (const raw of log.split('\n')) {
    const line = raw.trim();
    if (!line.startsWith('test_')) continue;
    const name = line.split(/\s+/)[0] as string;
    if (line.endsWith(' E')) map.set(name, 'ERROR');
    if (line.endsWith(' F')) map.set(name, 'FAILED');
    if (line.endsWith(' ok')) map.set(name, 'PASSED');
  }
  return map;
}

/** seaborn's pytest output (`FAILED id`, `id PASSED …`, `PASSED id`). */
export function parseSeaborn(log: string): StatusMap {
  const map: StatusMap = new Map();
  for (const line of log.split('\n')) {
    if (line.startsWith('FAILED')) {
      const id = line.split(/\s+/)[1];
      if (id) map.set(id, 'FAILED');
    } else if (line.includes(' PASSED ')) {
      const parts = line.split(/\s+/).filter(Boolean);
      if (parts[1] === 'PASSED' && parts[0]) map.set(parts[0], 'PASSED');
    } else if (line.startsWith('PASSED')) {
      const id = line.split(/\s+/)[1];
      if (id) map.set(id, 'PASSED');
    }
  }
  return map;
}

/** matplotlib's pytest output: `MouseButton.LEFT`/`RIGHT` in ids become 1/3, then `-rA` lines. */
export function parseMatplotlib(log: string): StatusMap {
  const map: StatusMap = new Map();
  for (const raw of log.split('\n')) {
    let line = raw.replaceAll('MouseButton.LEFT', '1').replaceAll('MouseButton.RIGHT', '3');
    if (!STATUSES.some((s) => line.startsWith(s))) continue;
    if (line.startsWith('FAILED')) line = line.replaceAll(' - ', ' ');
    const parts = line.split(/\s+/).filter(Boolean);
    if (parts.length <= 1) continue;
    map.set(parts[1] as string, parts[0] as TestStatus);
  }
  return map;
}

/** The log parsers by the name a spec's `log_parser` gives. */
export const LOG_PARSERS = {
  pytest: parsePytest,
  'pytest-options': parsePytestOptions,
  'pytest-v2': parsePytestV2,
  django: parseDjango,
  sympy: parseSympy,
  seaborn: parseSeaborn,
  matplotlib: parseMatplotlib,
} as const satisfies Record<string, (log: string) => StatusMap>;

/** A log parser's name. */
export type LogParserName = keyof typeof LOG_PARSERS;

/** The log parser names, for schemas and messages. */
export const LOG_PARSER_NAMES = Object.keys(LOG_PARSERS) as [LogParserName, ...LogParserName[]];

/**
 * The parser SWE-bench uses for each repository of its Python data sets (`MAP_REPO_TO_PARSER`), the default when a
 * spec names none; any other repository defaults to `pytest`.
 */
export const REPO_LOG_PARSERS: Readonly<Record<string, LogParserName>> = {
  'astropy/astropy': 'pytest-v2',
  'django/django': 'django',
  'marshmallow-code/marshmallow': 'pytest',
  'matplotlib/matplotlib': 'matplotlib',
  'mwaskom/seaborn': 'seaborn',
  'pallets/flask': 'pytest',
  'psf/requests': 'pytest-options',
  'pvlib/pvlib-python': 'pytest',
  'pydata/xarray': 'pytest',
  'pydicom/pydicom': 'pytest-options',
  'pylint-dev/astroid': 'pytest',
  'pylint-dev/pylint': 'pytest-options',
  'pytest-dev/pytest': 'pytest',
  'pyvista/pyvista': 'pytest',
  'scikit-learn/scikit-learn': 'pytest-v2',
  'sqlfluff/sqlfluff': 'pytest',
  'sphinx-doc/sphinx': 'pytest-v2',
  'sympy/sympy': 'sympy',
};

/** Parses a test log with the named parser. */
export function parseTestLog(parser: LogParserName, log: string): StatusMap {
  return LOG_PARSERS[parser](log);
}

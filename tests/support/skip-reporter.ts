/**
 * A vitest reporter (added beside `default` in vitest.config.ts) that refuses silent holes: at the end of a run
 * it lists every skipped test that needs a real component, i.e. whose full name (suite names included) or
 * skip note carries `[requires:<component>]` (see `tests/support/requires.ts`). With `CI` set it fails the run.
 */
import type { UserConsoleLog } from 'vitest';
import type { Reporter, SerializedError, TestModule, TestRunEndReason } from 'vitest/node';

const TAG = /\[requires:([a-z0-9_-]+)\]/gi;
/** The line `requires.ts` prints when a probe fails; the reporter collects the reasons for its banner. */
const SKIP_WARNING = /SKIPPED: (.+?) \[requires:([a-z0-9_-]+)\]/gi;

interface SkippedTest {
  readonly name: string;
  readonly file: string;
  readonly components: readonly string[];
  readonly note: string | undefined;
}

function isCI(): boolean {
  const ci = process.env['CI'];
  return ci !== undefined && ci !== '' && ci !== '0' && ci.toLowerCase() !== 'false';
}

/** Lists skipped `[requires:…]` tests at the end of the run; fails the run when `CI` is set. */
export default class SkipReporter implements Reporter {
  private readonly reasons = new Map<string, Set<string>>();

  onTestRunStart(): void {
    this.reasons.clear();
  }

  onUserConsoleLog(log: UserConsoleLog): void {
    for (const match of log.content.matchAll(SKIP_WARNING)) {
      const [, why, component] = match;
      if (why === undefined || component === undefined) continue;
      const set = this.reasons.get(component) ?? new Set<string>();
      set.add(why);
      this.reasons.set(component, set);
    }
  }

  onTestRunEnd(
    testModules: ReadonlyArray<TestModule>,
    _unhandledErrors: ReadonlyArray<SerializedError>,
    reason: TestRunEndReason,
  ): void {
    if (reason === 'interrupted') return;
    const skipped: SkippedTest[] = [];
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const result = test.result();
        if (result.state !== 'skipped') continue;
        const text = `${test.fullName} ${result.note ?? ''}`;
        const components = [...new Set([...text.matchAll(TAG)].map((m) => (m[1] ?? '').toLowerCase()))];
        if (components.length === 0) continue;
        skipped.push({ name: test.fullName, file: module.relativeModuleId, components, note: result.note });
      }
    }
    if (skipped.length === 0) return;

    const ci = isCI();
    const bar = '='.repeat(100);
    const lines = [
      '',
      bar,
      `${skipped.length} test(s) needing a real component were SKIPPED${ci ? ' — failing the run because CI is set' : ''}:`,
    ];
    for (const test of skipped) {
      lines.push(`  - [${test.components.join(', ')}] ${test.file} > ${test.name}${test.note ? ` (${test.note})` : ''}`);
    }
    const components = [...new Set(skipped.flatMap((t) => t.components))].sort();
    for (const component of components) {
      const why = [...(this.reasons.get(component) ?? [])];
      lines.push(`  ${component}: ${why.length > 0 ? why.join('; ') : 'skipped without a probe message (.skip, filter or note)'}`);
    }
    lines.push(
      ci
        ? 'CI requires every component: run `bash scripts/setup.sh` on this machine and fix what it warns about.'
        : 'Run `npm run setup` to install or start the missing components. With CI=true this run would fail.',
      bar,
      '',
    );
    process.stderr.write(`${lines.join('\n')}\n`);
    if (ci) process.exitCode = 1;
  }
}

import { parserTargets } from './parsers.targets.js';
import { describeTargets } from './vitest-targets.js';

describeTargets('parsers', parserTargets());

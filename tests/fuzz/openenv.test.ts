import { openEnvTargets } from './openenv.targets.js';
import { describeTargets } from './vitest-targets.js';

describeTargets('openenv serve-env', openEnvTargets());

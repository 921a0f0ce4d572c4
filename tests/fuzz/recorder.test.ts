import { recorderTargets } from './recorder.targets.js';
import { describeTargets } from './vitest-targets.js';

describeTargets('recorder', recorderTargets());

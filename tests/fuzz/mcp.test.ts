import { mcpTargets } from './mcp.targets.js';
import { describeTargets } from './vitest-targets.js';

describeTargets('mcp tools', mcpTargets());

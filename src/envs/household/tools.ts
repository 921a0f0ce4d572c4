import type { ToolSpec } from '../../core/types.js';
import { strictTool as tool, textParam as name } from '../shared/tool-spec.js';

/** The tools of `gymflow/household-v0` (ALFWorld's commands, as tool calls) and the `finish` that gives up. */

const OBJECT = name('An object, e.g. "apple 1".');

/** The tools, in the order they are offered. */
export const HOUSEHOLD_TOOLS: readonly ToolSpec[] = [
  tool('go', 'Go to a receptacle ("countertop 1") or a room ("kitchen") anywhere in the house.', 'execute', { target: name('A receptacle or a room.') }),
  tool('open', 'Open a receptacle where you are (fridge, cabinet, drawer, microwave, safe).', 'write', { target: name('The receptacle, e.g. "fridge 1".') }),
  tool('close', 'Close an open receptacle where you are.', 'write', { target: name('The receptacle, e.g. "fridge 1".') }),
  tool('take', 'Pick up an object from the receptacle where you are; you can hold one object at a time.', 'write', { object: OBJECT, from: name('The receptacle it is in or on.') }),
  tool('put', 'Put the object you hold in or on the receptacle where you are.', 'write', { object: OBJECT, into: name('The receptacle.') }),
  tool('clean', 'Clean the object you hold with the sink basin or bathtub basin where you are.', 'write', { object: OBJECT, with: name('A sinkbasin or bathtubbasin.') }),
  tool('heat', 'Heat the object you hold with the microwave or stove burner where you are.', 'write', { object: OBJECT, with: name('A microwave or stoveburner.') }),
  tool('cool', 'Cool the object you hold with the fridge where you are.', 'write', { object: OBJECT, with: name('A fridge.') }),
  tool('use', 'Turn a desk lamp where you are on or off.', 'execute', { object: name('A lamp, e.g. "desklamp 1".') }),
  tool('examine', 'Describe an object you hold or see, or the receptacle where you are.', 'read', { target: name('An object or a receptacle.') }),
  tool('inventory', 'Say what you are holding.', 'read', {}),
  tool('look', 'Describe where you are and what you see.', 'read', {}),
  tool('finish', 'Stop and end the episode (the task counts only if its goal already holds; reaching the goal ends the episode by itself).', 'submit', {}),
];

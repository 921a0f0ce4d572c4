import type { Action } from '../../core/types.js';
import { OBJECT_KINDS, RECEPTACLE_KINDS, ROOM_NAMES, type Appliance, type World } from './world.js';

/**
 * The actions that are valid in a world's current state (ALFWorld's `admissible_commands`), as tool calls:
 * going anywhere else, opening or closing the receptacle at hand, taking what is visible there with empty
 * hands, putting, cleaning, heating or cooling what is held where that works, using a lamp at hand,
 * examining, `inventory`, `look` and `finish`. Every action listed steps without `info.error`.
 */
export function admissibleActions(world: World): Action[] {
  const out: Action[] = [];
  const loc = world.location;
  const at = loc?.kind === 'receptacle' ? world.receptacles.get(loc.name) : undefined;
  for (const room of world.rooms) if (loc?.kind !== 'room' || loc.room !== room) out.push({ tool: 'go', params: { target: ROOM_NAMES[room] } });
  for (const r of world.receptacles.values()) if (r !== at) out.push({ tool: 'go', params: { target: r.name } });
  const held = world.held;
  if (at) {
    if (at.openable) out.push({ tool: at.open ? 'close' : 'open', params: { target: at.name } });
    const visible = !at.openable || at.open;
    if (visible) {
      for (const o of at.contents) {
        if (o.type === 'desklamp') out.push({ tool: 'use', params: { object: o.name } });
        else if (!held) out.push({ tool: 'take', params: { object: o.name, from: at.name } });
        out.push({ tool: 'examine', params: { target: o.name } });
      }
      if (held) out.push({ tool: 'put', params: { object: held.name, into: at.name } });
    } else {
      for (const o of at.contents) if (o.type === 'desklamp') out.push({ tool: 'use', params: { object: o.name } });
    }
    const appliance = (RECEPTACLE_KINDS[at.type] as { appliance?: Appliance }).appliance;
    if (held && held.type !== 'desklamp' && appliance && (OBJECT_KINDS[held.type].affords as readonly Appliance[]).includes(appliance)) {
      out.push({ tool: appliance, params: { object: held.name, with: at.name } });
    }
    out.push({ tool: 'examine', params: { target: at.name } });
  }
  if (held) out.push({ tool: 'examine', params: { target: held.name } });
  out.push({ tool: 'inventory', params: {} }, { tool: 'look', params: {} }, { tool: 'finish', params: {} });
  return out;
}

import { describe, expect, it } from 'vitest';
import { Rng } from '../../core/rng.js';
import { TEMPLATE_SPLIT } from './tasks.js';
import { buildWorld, generateHouse, layoutSignature, listThings, OBJECT_KINDS, RECEPTACLE_KINDS, ROOM_TEMPLATES, type RoomType } from './world.js';

const firstTemplate = (): number => 0;

describe('household world', () => {
  it('generates the same house from the same seed, and another from another', () => {
    const a = generateHouse(new Rng(7), firstTemplate);
    const b = generateHouse(new Rng(7), firstTemplate);
    expect(b).toEqual(a);
    expect(layoutSignature(generateHouse(new Rng(8), firstTemplate)) + JSON.stringify(generateHouse(new Rng(8), firstTemplate).objects)).not.toBe(layoutSignature(a) + JSON.stringify(a.objects));
  });

  it('numbers receptacles and objects per type across rooms and places objects where their kind allows', () => {
    for (let seed = 0; seed < 50; seed++) {
      const house = generateHouse(new Rng(seed), (room, rng) => rng.int(0, ROOM_TEMPLATES[room].length - 1));
      expect(house.rooms[0]?.type).toBe('kitchen');
      const names = [...house.receptacles.map((r) => r.name), ...house.objects.map((o) => o.name)];
      expect(new Set(names).size).toBe(names.length);
      const typeOf = new Map(house.receptacles.map((r) => [r.name, r.type]));
      expect(house.objects.filter((o) => o.type === 'desklamp')).toHaveLength(1);
      for (const o of house.objects) {
        const at = typeOf.get(o.at);
        expect(at).toBeDefined();
        if (o.type !== 'desklamp') expect(OBJECT_KINDS[o.type].places).toContain(at);
      }
    }
  });

  it('furnishes held-out rooms from templates whose receptacle types no training template has', () => {
    for (const room of Object.keys(ROOM_TEMPLATES) as RoomType[]) {
      const types = (t: number): string => [...new Set((ROOM_TEMPLATES[room][t] ?? []).map(([type]) => type))].sort().join(',');
      const train = new Set(TEMPLATE_SPLIT.train.map(types));
      for (const t of TEMPLATE_SPLIT.heldout) expect(train.has(types(t)), `${room} template ${t}`).toBe(false);
    }
  });

  it('builds an episode world with everything closed and nothing held', () => {
    const house = generateHouse(new Rng(3), firstTemplate);
    const world = buildWorld(house);
    expect(world.held).toBeUndefined();
    expect(world.location).toBeUndefined();
    for (const r of world.receptacles.values()) {
      expect(r.open).toBe(false);
      expect(r.openable).toBe(RECEPTACLE_KINDS[r.type].openable);
    }
    const contents = [...world.receptacles.values()].reduce((n, r) => n + r.contents.length, 0);
    expect(contents).toBe(house.objects.length);
    // The episode state is a copy: changing it leaves the house alone.
    [...world.objects.values()][0]!.hot = true;
    expect([...buildWorld(house).objects.values()].some((o) => o.hot)).toBe(false);
  });

  it("lists things as ALFWorld does", () => {
    expect(listThings([])).toBe('nothing');
    expect(listThings(['apple 1'])).toBe('a apple 1');
    expect(listThings(['apple 1', 'mug 2', 'knife 1'])).toBe('a apple 1, a mug 2, and a knife 1');
  });
});

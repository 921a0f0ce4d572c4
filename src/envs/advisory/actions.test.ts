import { describe, expect, it } from 'vitest';
import { AdvisoryToolError, runAdvisoryTool } from './actions.js';
import { returnDate } from './plan.js';
import { getAdvisoryTask } from './tasks.js';

const task = getAdvisoryTask('advisory-train-00004');
const r = task.request;
const run = (tool: string, params: Record<string, unknown>): string => runAdvisoryTool(task.world, { tool, params });

describe('the advisory tools', () => {
  it('lists the flights of a route and date, with arrival times and fares', () => {
    const out = JSON.parse(run('search_flights', { origin: r.origin.toLowerCase(), destination: r.destination, date: r.departDate })) as { id: string; date: string; arrives: string; stops: number; price_per_person: number }[];
    expect(out).toHaveLength(6);
    expect(out.every((f) => f.date === r.departDate && /^\d{2}:\d{2}( \(\+1 day\))?$/.test(f.arrives))).toBe(true);
    expect(out.map((f) => f.id)).toContain(task.best.plan.outbound);
    expect(run('search_flights', { origin: r.destination, destination: r.origin, date: returnDate(r) })).toContain(task.best.plan.return);
    expect(run('search_flights', { origin: r.origin, destination: r.destination, date: '2030-01-01' })).toBe(`No flights found from ${r.origin} to ${r.destination} on 2030-01-01.`);
  });

  it('lists the hotels with their availability for the stay asked, and the activities', () => {
    const hotels = JSON.parse(run('search_hotels', { city: r.destination, check_in: r.departDate, nights: r.nights })) as { id: string; available: boolean; booked_out?: string[] }[];
    expect(hotels).toHaveLength(9);
    for (const h of hotels) expect(h.available).toBe(h.booked_out === undefined);
    expect(hotels.find((h) => h.id === task.best.plan.hotel)?.available).toBe(true);
    expect(run('search_hotels', { city: 'Atlantis', check_in: r.departDate, nights: 2 })).toBe('No hotels found in Atlantis.');
    expect(JSON.parse(run('search_activities', { city: r.destination }))).toHaveLength(12);
  });

  it('prices a plan as the task does, and refuses unknown ids and a return before the outbound', () => {
    const p = task.best.plan;
    const priced = JSON.parse(run('price_plan', { outbound_flight: p.outbound, return_flight: p.return, hotel: p.hotel, activities: p.activities, travellers: r.travellers })) as Record<string, number>;
    expect(priced).toMatchObject({ nights: r.nights, total: task.best.cost, value: task.best.value });
    expect(() => run('price_plan', { outbound_flight: 'FL0000X', return_flight: p.return, hotel: p.hotel, activities: ['AC-1'], travellers: 1 })).toThrow(new AdvisoryToolError('unknown_option', 'no such option: FL0000X, AC-1'));
    expect(() => run('price_plan', { outbound_flight: p.return, return_flight: p.outbound, hotel: p.hotel, activities: [], travellers: 1 })).toThrow(/must leave after the outbound flight/);
  });
});

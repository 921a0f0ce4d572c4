import { describe, expect, it } from 'vitest';
import { baseName, contentText, firstLine, joinText, parseToolArguments, toIsoTimestamp } from './values.js';

describe('values', () => {
  it('reads timestamps in the shapes logs use', () => {
    expect(toIsoTimestamp('2025-01-20T20:29:35.040676')).toBe('2025-01-20T20:29:35.040Z'); // naive → UTC
    expect(toIsoTimestamp('2026-01-23T17:13:41.093Z')).toBe('2026-01-23T17:13:41.093Z');
    expect(toIsoTimestamp(1778276236)).toBe('2026-05-08T21:37:16.000Z');
    expect(toIsoTimestamp(1778276236123)).toBe('2026-05-08T21:37:16.123Z');
    expect(toIsoTimestamp('Fri, 08 May 2026 21:37:16 GMT')).toBe('2026-05-08T21:37:16.000Z');
    expect(toIsoTimestamp('soon')).toBeUndefined();
    expect(toIsoTimestamp(null)).toBeUndefined();
  });

  it('parses tool arguments, keeping bad ones whole', () => {
    expect(parseToolArguments('{"a":1}')).toEqual({ params: { a: 1 } });
    expect(parseToolArguments({ a: 1 })).toEqual({ params: { a: 1 } });
    expect(parseToolArguments(undefined)).toEqual({ params: {} });
    expect(parseToolArguments('{"a":')).toMatchObject({ params: { arguments: '{"a":' }, warning: expect.stringMatching(/not valid JSON/) });
    expect(parseToolArguments('[1]')).toMatchObject({ params: { arguments: [1] } });
  });

  it('extracts text from content blocks', () => {
    expect(contentText([{ type: 'text', text: 'a' }, { type: 'image', source: {} }, { type: 'text', text: 'b' }])).toBe('a\nb');
    expect(contentText(null)).toBe('');
    expect(joinText([' a ', undefined, '', 'b'])).toBe('a\n\nb');
    expect(joinText(['  '])).toBeUndefined();
    expect(firstLine('  x\ny')).toBe('x');
    expect(baseName('/a/b/run.traj.json', ['.json', '.traj.json'])).toBe('run');
  });
});

import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { DATASETS_DOC, renderSchemaSection, updateDoc } from './doc.js';
import { RECORD_FORMATS } from './schemas.js';

describe('docs/datasets.md', () => {
  it('carries the current JSON Schema of every record format (refresh: npx tsx src/hub/export/doc.ts --write)', async () => {
    const doc = await readFile(DATASETS_DOC, 'utf8');
    expect(updateDoc(doc)).toBe(doc);
    for (const f of RECORD_FORMATS) expect(renderSchemaSection()).toContain(`"title": "gymflow ${f} record"`);
  });
});

import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { PACKAGE_ROOT } from '../../core/package-root.js';
import { RECORD_FORMATS, recordJsonSchema } from './schemas.js';

/**
 * The generated part of docs/datasets.md: the JSON Schema of every record format, emitted from the zod
 * schemas in `schemas.ts`. `doc.test.ts` fails when the doc is stale; refresh it with
 * `npx tsx src/hub/export/doc.ts --write`.
 */

/** Marks the start of the generated section. */
export const BEGIN_MARKER = '<!-- BEGIN GENERATED: record schemas (npx tsx src/hub/export/doc.ts --write) -->';
/** Marks the end of the generated section. */
export const END_MARKER = '<!-- END GENERATED: record schemas -->';

/** The path of docs/datasets.md. */
export const DATASETS_DOC = path.join(PACKAGE_ROOT, 'docs', 'datasets.md');

/** The generated section, markers included. */
export function renderSchemaSection(): string {
  const parts = [BEGIN_MARKER, ''];
  for (const format of RECORD_FORMATS) {
    parts.push(`### \`${format}\` record`, '', '```json', JSON.stringify(recordJsonSchema(format), null, 2), '```', '');
  }
  parts.push(END_MARKER);
  return parts.join('\n');
}

/** `doc` with its generated section replaced by the current one. */
export function updateDoc(doc: string): string {
  const start = doc.indexOf(BEGIN_MARKER);
  const end = doc.indexOf(END_MARKER);
  if (start < 0 || end < start) throw new Error(`docs/datasets.md: markers ${BEGIN_MARKER} … ${END_MARKER} not found`);
  return doc.slice(0, start) + renderSchemaSection() + doc.slice(end + END_MARKER.length);
}

async function main(): Promise<void> {
  const doc = await readFile(DATASETS_DOC, 'utf8');
  const next = updateDoc(doc);
  if (process.argv.includes('--write')) {
    await writeFile(DATASETS_DOC, next);
    console.log(next === doc ? 'docs/datasets.md is up to date' : 'updated docs/datasets.md');
  } else if (next !== doc) {
    console.error('docs/datasets.md is stale: run npx tsx src/hub/export/doc.ts --write');
    process.exitCode = 1;
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}

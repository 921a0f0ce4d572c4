import { describe, expect, it } from 'vitest';
import { buildSnapshot, diffArchive } from './snapshot.js';
import { packTar, unpackTar } from './tar.js';

describe('snapshot diff', () => {
  it('lists added, modified and deleted files (ignoring .git) and packs the changed ones with the facts', async () => {
    const current = await packTar([
      { path: 'a.py', content: 'same\n' },
      { path: 'b.py', content: 'changed\n' },
      { path: 'new.py', content: 'new\n' },
      { path: '.git/HEAD', content: 'ref\n' },
    ]);
    const { diff, changed } = await diffArchive({ 'a.py': 'same\n', 'b.py': 'old\n', 'gone.py': 'x\n' }, current);
    expect(diff).toEqual({ added: ['new.py'], modified: ['b.py'], deleted: ['gone.py'] });
    const entries = await unpackTar(await buildSnapshot({ task: 't' }, diff, changed));
    expect(entries.map((e) => e.path)).toEqual(['snapshot.json', 'files/b.py', 'files/new.py']);
    expect(JSON.parse(entries[0]!.content.toString())).toMatchObject({ task: 't', diff: { deleted: ['gone.py'] } });
  });
});

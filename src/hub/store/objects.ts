import { readFile } from 'node:fs/promises';
import { isErrno } from '../../core/fs.js';
import { StoreError } from '../errors.js';
import { objectPath } from './layout.js';

/**
 * The bytes of an object of the store at `root`, read whole: for small objects (JSON, manifests).
 *
 * @throws StoreError when the object is not in the store.
 */
export async function readObject(root: string, ref: string): Promise<Buffer> {
  try {
    return await readFile(objectPath(root, ref));
  } catch (err) {
    if (isErrno(err, 'ENOENT')) throw new StoreError(`object ${ref} is not in store ${root}`);
    throw err;
  }
}

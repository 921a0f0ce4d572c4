// The entry point of gymflow's worker threads when gymflow runs from its TypeScript sources (vitest, tsx; the
// build starts its threads' modules as they are). tsx's loader, which a worker thread does not inherit from the
// thread that started it, is registered here; then the module named in `workerData.module` (a file URL) is
// imported, which reads the rest of `workerData` itself.
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(workerData.module);

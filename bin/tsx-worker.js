// The entry point of gymflow's worker threads. Sources are TypeScript run through tsx's loader, which a worker
// thread does not inherit from the thread that started it: this registers it, then imports the module named
// in `workerData.module` (a file URL), which reads the rest of `workerData` itself.
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(workerData.module);

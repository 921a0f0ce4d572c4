/** `gymflow cluster`: PostgreSQL, the object store, the Temporal server, its Web UI and the workers as background processes on one machine. */
export * from './binaries.js';
export * from './cluster.js';
export * from './configs.js';
export * from './daemon.js';

/**
 * The environment variable naming OpenEnv servers to register: `NAME=URL[,NAME=URL…]`, each as `openenv/NAME-v0`.
 * It reaches every gymflow process (the CLI, the pipeline's workers), where `make` needs no kwargs. In a module of
 * its own so that `gymflow envs` can read it without loading the OpenEnv client.
 */
export const OPENENV_VARIABLE = 'GYMFLOW_OPENENV';

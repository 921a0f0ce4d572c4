/**
 * Paired samples the correlation tests share, with their reference values computed by Python 3.11 +
 * scipy 1.17.1 on exactly these arrays (`scipy.stats.pearsonr`, `spearmanr`, `kendalltau` (tau-b)).
 */

/** An automatic score with ties, and a human score on a 1–5 scale with ties. */
export const TIED_AUTO = [0.1, 0.4, 0.35, 0.8, 0.4, 0.9, 0.2, 0.65, 0.65, 0.5];
/** See {@link TIED_AUTO}. */
export const TIED_HUMAN = [1, 3, 2, 5, 2, 4, 1, 4, 3, 3];
/** Two samples without ties. */
export const X = [0.12, 0.95, 0.33, 0.47, 0.71, 0.05, 0.88, 0.29, 0.64, 0.51, 0.18, 0.79];
/** See {@link X}. */
export const Y = [0.3, 0.8, 0.2, 0.55, 0.6, 0.1, 0.95, 0.4, 0.5, 0.7, 0.15, 0.65];

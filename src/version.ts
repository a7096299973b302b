/** The package version, reported in worker heartbeats. */
export const VERSION = '0.1.0';

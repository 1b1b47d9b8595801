import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    globalSetup: ['test/globalSetup.ts'],
    // Property tests draw from one fixed seed: the same cases every run (FC_SEED=<n> for others).
    setupFiles: ['test/support/seededProperties.ts'],
    testTimeout: 60_000,
    // expect.poll waits on pages and on the service (the console's browser test); its 1 s
    // default is shorter than a page's first load on a loaded 2-core machine.
    expect: { poll: { timeout: 15_000 } },
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 2,
    projects: [
      // The unit tests next to the code are pure (no service, no database of their own): one
      // worker process runs many of them, without a process and a fresh module graph per file.
      { extends: true, test: { name: 'unit', include: ['src/**/*.test.ts'], isolate: false } },
      // Each integration test file starts its own service, database and chain, and stops them
      // after it; the files of one worker share its process and module graph (the app's imports
      // are loaded once per worker, not once per file: the suite took 473 s instead of 764 s).
      // What a file starts is its own (a database, a port, a data directory), so nothing of
      // one file's app is seen by the next; a test that needs a process of its own spawns one.
      { extends: true, test: { name: 'integration', include: ['test/**/*.test.ts'], isolate: false } },
    ],
  },
})

import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    globalSetup: ['test/globalSetup.ts'],
    testTimeout: 60_000,
    // expect.poll waits on pages and on the service (the console's browser test); its 1 s
    // default is shorter than a page's first load on a loaded 2-core machine.
    expect: { poll: { timeout: 15_000 } },
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 2,
  },
})

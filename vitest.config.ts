import { defineConfig } from 'vitest/config';

// Two projects: fast pure unit tests, and integration tests that start real servers on port 0.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['shared/test/**/*.test.ts', 'calcium/test/**/*.test.ts', 'server/test/unit/**/*.test.ts', 'agent/test/unit/**/*.test.ts', 'client/test/**/*.test.ts'],
          environment: 'node',
          // A time limit catches hangs, not slowness: some unit tests do seconds of real work (the
          // demo dataset on a worker thread, fuzzing) that a machine under load stretches well past
          // vitest's 5 s default (seen in stressed runs).
          testTimeout: 180_000,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['server/test/integration/**/*.test.ts', 'agent/test/integration/**/*.test.ts'],
          environment: 'node',
          // Limits catch hangs, not slowness: under stress-ng on both cores beside the suite a
          // real server, kernel and agent take several times their quiet time (seen: 62 s).
          testTimeout: 180_000,
          hookTimeout: 180_000,
          // Integration suites start servers and child processes: keep them from competing for 2 cores.
          fileParallelism: false,
        },
      },
    ],
  },
});

import fc from 'fast-check'

/**
 * Every property test draws from one fixed seed (fast-check otherwise seeds from the clock), so
 * each run of the suite tries the same cases; `FC_SEED=<n>` tries others.
 */
fc.configureGlobal({ seed: Number(process.env.FC_SEED ?? 20261207) })

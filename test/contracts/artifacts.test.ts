import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { contractSourcesHash } from '../../src/dev/artifacts/index.ts'
import { compileContracts, DEFAULT_ARTIFACTS_DIR, hashSources, readSources, renderArtifactFiles } from '../../src/dev/compile.ts'

const STALE = 'src/dev/artifacts is stale: run `npm run compile-contracts` and commit the result'

describe('contract artifacts', () => {
  // A synchronous solc compile of every contract: ~20 s on a quiet 2-core machine, several
  // times that when the machine is loaded, so it gets its own bound instead of the default 60 s.
  it('match a fresh in-memory compile of contracts/*.sol', { timeout: 300_000 }, () => {
    const result = compileContracts()
    expect(result.sourcesHash, STALE).toBe(contractSourcesHash)
    const expected = renderArtifactFiles(result)
    const onDisk = readdirSync(DEFAULT_ARTIFACTS_DIR).filter((f) => f.endsWith('.ts')).sort()
    expect(onDisk, STALE).toEqual([...expected.keys()].sort())
    for (const [file, text] of expected) {
      expect(readFileSync(join(DEFAULT_ARTIFACTS_DIR, file), 'utf8') === text, `${STALE} (${file} differs)`).toBe(true)
    }
    expect(result.warnings).toEqual([])
    expect(Object.keys(result.artifacts).sort()).toEqual([
      'AmmFactory',
      'AmmPair',
      'AmmRouter',
      'BondingCurveLaunchpad',
      'FeeLocker',
      'InstantPoolLauncher',
      'LaunchToken',
      'MockUSDC',
      'SelfFundedToken',
      'StockToken',
      'WETH9',
    ])
  })

  it('the sources hash changes with any edit to a .sol file', () => {
    const sources = readSources()
    const edited = { ...sources, 'AmmPair.sol': `${sources['AmmPair.sol']}\n// edit` }
    expect(hashSources(sources)).toBe(contractSourcesHash)
    expect(hashSources(edited)).not.toBe(contractSourcesHash)
  })
})

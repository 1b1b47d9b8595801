/**
 * Compiles contracts/*.sol offline and regenerates src/dev/artifacts/.
 * Usage: node scripts/compile-contracts.ts
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { compileContracts, DEFAULT_ARTIFACTS_DIR, renderArtifactFiles } from '../src/dev/compile.ts'

const started = performance.now()
const result = compileContracts()
for (const warning of result.warnings) process.stderr.write(`${warning}\n`)

const files = renderArtifactFiles(result)
mkdirSync(DEFAULT_ARTIFACTS_DIR, { recursive: true })
for (const stale of readdirSync(DEFAULT_ARTIFACTS_DIR)) {
  if (stale.endsWith('.ts') && !files.has(stale)) rmSync(join(DEFAULT_ARTIFACTS_DIR, stale))
}
for (const [file, text] of files) writeFileSync(join(DEFAULT_ARTIFACTS_DIR, file), text)

const seconds = ((performance.now() - started) / 1000).toFixed(1)
process.stdout.write(
  `solc ${result.solcVersion}: ${Object.keys(result.artifacts).length} contracts -> ${DEFAULT_ARTIFACTS_DIR} (${seconds}s)\n` +
    Object.entries(result.artifacts)
      .map(([name, a]) => `  ${name.padEnd(24)} ${(a.bytecode.length - 2) / 2} bytes\n`)
      .join(''),
)

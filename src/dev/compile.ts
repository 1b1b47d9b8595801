/**
 * Offline compilation of the reference contracts in `contracts/` with the `solc` npm package
 * (solc-js, standard JSON, optimizer on), and rendering of the typed artifact modules in
 * `src/dev/artifacts/`. Used by `scripts/compile-contracts.ts` and by the freshness test.
 */
import { createHash } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type SolcModule from 'solc'
import type { Abi, Hex } from 'viem'

/** Solidity sources compiled by default: `<repo>/contracts`. */
export const DEFAULT_CONTRACTS_DIR = fileURLToPath(new URL('../../contracts/', import.meta.url))
/** Where the generated artifact modules live: `<repo>/src/chain/artifacts`. */
export const DEFAULT_ARTIFACTS_DIR = fileURLToPath(new URL('./artifacts/', import.meta.url))

// Loaded with Node's own require so test runners do not push the 9 MB emscripten build through
// their module transform (which makes compiling several times slower).
const solc = createRequire(import.meta.url)('solc') as typeof SolcModule

/** EVM target; Cancun is supported by anvil and by every chain we target. */
const EVM_VERSION = 'cancun'
const OPTIMIZER_RUNS = 200

export interface ContractArtifact {
  abi: Abi
  bytecode: Hex
}

export interface CompileResult {
  /** Deployable (non-abstract) contracts by name. */
  artifacts: Record<string, ContractArtifact>
  /** SHA-256 (hex) over every source, sorted by file name: `<name>\0<content>\0` each. */
  sourcesHash: string
  /** solc version used, e.g. `0.8.37+commit.…`. */
  solcVersion: string
  /** Warnings, formatted by solc. Errors throw instead. */
  warnings: string[]
}

interface SolcOutput {
  errors?: { severity: 'error' | 'warning' | 'info'; formattedMessage: string }[]
  sources?: Record<string, { ast: SolcAstNode }>
  contracts?: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>
}

interface SolcAstNode {
  nodeType: string
  name?: string
  contractKind?: string
  abstract?: boolean
  nodes?: SolcAstNode[]
}

/** Reads every `*.sol` file of `dir`, sorted by name. */
export function readSources(dir: string = DEFAULT_CONTRACTS_DIR): Record<string, string> {
  const names = readdirSync(dir).filter((f) => f.endsWith('.sol')).sort()
  if (names.length === 0) throw new Error(`No .sol files in ${dir}`)
  return Object.fromEntries(names.map((name) => [name, readFileSync(join(dir, name), 'utf8')]))
}

/**
 * SHA-256 of the sources: for each file sorted by name, `<name>\0<content>\0`, concatenated.
 *
 * @example
 * const hash = hashSources(readSources())
 */
export function hashSources(sources: Record<string, string>): string {
  const hash = createHash('sha256')
  for (const name of Object.keys(sources).sort()) hash.update(`${name}\0${sources[name]}\0`)
  return hash.digest('hex')
}

/**
 * Compiles `contracts/` (or `contractsDir`) in memory. Throws with solc's messages on errors.
 *
 * @example
 * const { artifacts, sourcesHash } = compileContracts()
 * artifacts.AmmRouter.abi // the router ABI
 */
export function compileContracts({ contractsDir = DEFAULT_CONTRACTS_DIR }: { contractsDir?: string } = {}): CompileResult {
  const sources = readSources(contractsDir)
  const input = {
    language: 'Solidity',
    sources: Object.fromEntries(Object.entries(sources).map(([name, content]) => [name, { content }])),
    settings: {
      optimizer: { enabled: true, runs: OPTIMIZER_RUNS },
      evmVersion: EVM_VERSION,
      outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'], '': ['ast'] } },
    },
  }
  const output = JSON.parse(
    solc.compile(JSON.stringify(input), {
      import: (path: string) => ({ error: `Imports outside contracts/ are not supported: ${path}` }),
    }),
  ) as SolcOutput
  const problems = output.errors ?? []
  const errors = problems.filter((e) => e.severity === 'error')
  if (errors.length > 0) throw new Error(`solc failed:\n${errors.map((e) => e.formattedMessage).join('\n')}`)

  const artifacts: Record<string, ContractArtifact> = {}
  for (const file of Object.keys(sources)) {
    for (const name of deployableContracts(output.sources?.[file]?.ast)) {
      const compiled = output.contracts?.[file]?.[name]
      if (!compiled) throw new Error(`solc output lacks ${file}:${name}`)
      if (artifacts[name]) throw new Error(`Contract name ${name} is defined twice`)
      artifacts[name] = { abi: compiled.abi, bytecode: `0x${compiled.evm.bytecode.object}` }
    }
  }
  return {
    artifacts,
    sourcesHash: hashSources(sources),
    solcVersion: String(solc.version()),
    warnings: problems.filter((e) => e.severity === 'warning').map((e) => e.formattedMessage),
  }
}

/** Names of the non-abstract contracts (no interfaces, libraries, abstract bases) in a source AST. */
function deployableContracts(ast: SolcAstNode | undefined): string[] {
  if (!ast) return []
  return (ast.nodes ?? [])
    .filter((n) => n.nodeType === 'ContractDefinition' && n.contractKind === 'contract' && !n.abstract)
    .map((n) => n.name ?? '')
}

const HEADER = '// Generated by scripts/compile-contracts.ts from contracts/*.sol. Do not edit; run `npm run compile-contracts`.\n'

/**
 * The artifact modules for a compile result, by file name: `<Name>.ts` per contract,
 * `index.ts` re-exporting them, and `sources.hash.ts`.
 *
 * @example
 * for (const [file, text] of renderArtifactFiles(compileContracts())) writeFileSync(join(dir, file), text)
 */
export function renderArtifactFiles(result: Pick<CompileResult, 'artifacts' | 'sourcesHash'>): Map<string, string> {
  const files = new Map<string, string>()
  const names = Object.keys(result.artifacts).sort()
  for (const name of names) {
    const { abi, bytecode } = result.artifacts[name]!
    files.set(
      `${name}.ts`,
      `${HEADER}export const ${name}Artifact = {\n  abi: ${JSON.stringify(abi, null, 2).replaceAll('\n', '\n  ')} as const,\n  bytecode: '${bytecode}' as const,\n} as const\n`,
    )
  }
  files.set(
    'sources.hash.ts',
    `${HEADER}/** SHA-256 over contracts/*.sol (sorted by name, \`<name>\\0<content>\\0\` each) these artifacts were built from. */\nexport const contractSourcesHash = '${result.sourcesHash}' as const\n`,
  )
  files.set(
    'index.ts',
    `${HEADER}${names.map((n) => `export { ${n}Artifact } from './${n}.ts'`).join('\n')}\nexport { contractSourcesHash } from './sources.hash.ts'\n`,
  )
  return files
}

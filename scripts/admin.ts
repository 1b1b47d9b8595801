import { parseArgs } from 'node:util'
import { loadConfig } from '../src/config.ts'
import { createLogger } from '../src/logger.ts'
import { openDatabase } from '../src/adapters/db/orm.ts'
import { startEmbeddedPostgres } from '../src/dev/embeddedPostgres.ts'
import { createAccount } from '../src/domain/accounts/createAccount.ts'
import { createAccountsRepository } from '../src/adapters/db/accounts.repository.ts'
import { createCreditsRepository } from '../src/adapters/db/credits.repository.ts'
import { grantCredits } from '../src/domain/billing/grantCredits.ts'
import { codePointLength } from '../src/domain/util/text.ts'

const USAGE = `usage: npm run -s admin -- <command> [options]

commands:
  create-account --name NAME [--operator]   create an account and its first API key (all scopes)
                                            and its starter grant (STARTER_CREDITS);
                                            prints {"accountId": "...", "apiKey": "cpk_..."}
  grant-credits --account ID --credits N [--ref REF]
                                            add N credits (1 credit = 0.001 USD) to an account as a
                                            "grant" ledger entry; with --ref, a repeat of the same
                                            ref grants nothing more; prints the entry and the balance after it
  deploy-contracts [--rpc-url URL] [--out PATH]
                                            deploy the reference contracts (WETH, USDC, AMM, venues,
                                            stocks and their pools) with DEPLOYER_PRIVATE_KEY and
                                            write the deployment manifest (default: CHAIN_RPC_URL,
                                            DEPLOYMENT_MANIFEST); prints the manifest path and addresses

Works whether or not the server is running, against the same database (DATABASE_URL, else the
embedded Postgres under DATA_DIR).`

function fail(message: string): never {
  process.stderr.write(`${message}\n\n${USAGE}\n`)
  process.exit(2)
}

async function main() {
  const [command, ...rest] = process.argv.slice(2)
  if (!command || command === '--help' || command === 'help') {
    process.stdout.write(`${USAGE}\n`)
    return
  }
  if (command === 'deploy-contracts') return deployContracts(rest)
  if (command === 'grant-credits') return grantCreditsCommand(rest)
  if (command !== 'create-account') fail(`unknown command: ${command}`)
  const { values } = parseArgs({
    args: rest,
    options: { name: { type: 'string' }, operator: { type: 'boolean', default: false } },
    strict: true,
  })
  const name = values.name?.trim()
  if (!name || codePointLength(name) > 64) fail('--name is required (1-64 characters)')

  await withDatabase(async (db, config) => {
    const deps = { accounts: createAccountsRepository({ em: db.orm.em, pool: db.pool, credits: createCreditsRepository(db.pool) }), starterCredits: config.starterCredits }
    const { account, apiKey } = await createAccount(deps, { name, isOperator: values.operator })
    process.stdout.write(`${JSON.stringify({ accountId: account.id, apiKey })}\n`)
  })
}

/** Opens the service's database (attaching to the server's embedded Postgres when it runs) for one command. */
async function withDatabase(fn: (db: Awaited<ReturnType<typeof openDatabase>>, config: ReturnType<typeof loadConfig>) => Promise<void>) {
  const config = loadConfig()
  const logger = createLogger({ level: config.logLevel === 'info' ? 'warn' : config.logLevel })
  // Attach to the server's embedded Postgres when it is running; otherwise start one for this command.
  const embedded = config.databaseUrl ? undefined : await startEmbeddedPostgres({ dataDir: config.dataDir, logger, mode: 'attach' })
  const db = await openDatabase({ url: config.databaseUrl ?? embedded!.url, poolSize: 2, logger })
  try {
    await fn(db, config)
  } finally {
    await db.close()
    await embedded?.stop()
  }
}

async function grantCreditsCommand(args: string[]) {
  const { values } = parseArgs({ args, options: { account: { type: 'string' }, credits: { type: 'string' }, ref: { type: 'string' } }, strict: true })
  const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
  if (!values.account || !UUID.test(values.account)) fail('--account must be an account id (a uuid)')
  if (!values.credits || !/^[1-9]\d{0,14}$/.test(values.credits)) fail('--credits must be a positive integer')
  if (values.ref !== undefined && (values.ref.length < 1 || values.ref.length > 200)) fail('--ref must be 1-200 characters')
  await withDatabase(async (db) => {
    const credits = createCreditsRepository(db.pool)
    const ref = values.ref === undefined ? undefined : `admin:${values.ref}`
    const { entry, created } = await grantCredits({ credits }, { accountId: values.account!.toLowerCase(), credits: Number(values.credits), ref })
    process.stdout.write(`${JSON.stringify({ entryId: entry.id, accountId: entry.accountId, credits: entry.credits, balanceAfter: entry.balanceAfter, ref: entry.ref, created })}\n`)
  })
}

async function deployContracts(args: string[]) {
  const { values } = parseArgs({ args, options: { 'rpc-url': { type: 'string' }, out: { type: 'string' } }, strict: true })
  const config = loadConfig()
  const rpcUrl = values['rpc-url'] ?? config.chain.rpcUrl
  const out = values.out ?? config.chain.manifestPath
  if (!rpcUrl) fail('--rpc-url (or CHAIN_RPC_URL) is required')
  if (!out) fail('--out (or DEPLOYMENT_MANIFEST) is required')
  if (!config.deployerPrivateKey) fail('set DEPLOYER_PRIVATE_KEY to a funded key (it needs about 101 ETH for the seeded pools)')
  const logger = createLogger({ level: config.logLevel === 'info' ? 'warn' : config.logLevel })
  const { privateKeyToAccount } = await import('viem/accounts')
  const { createChainClients, deployReferenceContracts } = await import('../src/dev/deploy.ts')
  const { writeManifest } = await import('../src/adapters/chain/manifest.ts')
  const probe = createChainClients({ rpcUrl: rpcUrl!, account: privateKeyToAccount(config.deployerPrivateKey!) })
  const chainId = await probe.publicClient.getChainId()
  const { publicClient, walletClient } = createChainClients({ rpcUrl: rpcUrl!, account: privateKeyToAccount(config.deployerPrivateKey!), chainId })
  const manifest = await deployReferenceContracts({ walletClient, publicClient, logger })
  await writeManifest(out!, manifest)
  process.stdout.write(`${JSON.stringify({ manifest: out, chainId: manifest.chainId, startBlock: manifest.startBlock, contracts: manifest.contracts })}\n`)
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`admin: ${err instanceof Error ? err.message : String(err)}\n`)
    process.exit(1)
  },
)

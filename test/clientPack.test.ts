import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'

const run = promisify(execFile)
const ROOT = resolve('.')
const dir = mkdtempSync(join(tmpdir(), 'alts-client-pack-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** The client's runtime dependencies and theirs, as installed at the root (name -> its folder). */
function runtimeDependencies(): Map<string, string> {
  const found = new Map<string, string>()
  const visit = (pkgJson: string) => {
    const deps = Object.keys((JSON.parse(readFileSync(pkgJson, 'utf8')) as { dependencies?: Record<string, string> }).dependencies ?? {})
    for (const name of deps) {
      if (found.has(name)) continue
      found.set(name, join(ROOT, 'node_modules', name))
      visit(join(ROOT, 'node_modules', name, 'package.json'))
    }
  }
  visit(join(ROOT, 'clients/typescript/package.json'))
  return found
}

const CONSUMER = `import { createClient, verifyWebhook, ValidationError, type AltsClient, type Resource } from '@alts/client'

const alts: AltsClient = createClient({ baseUrl: 'http://127.0.0.1:3000', apiKey: 'cpk_x' })
export async function firstSteps(): Promise<Resource> {
  const agent = await alts.POST('/agents', { body: { name: 'scout' } })
  const wallet: string = agent.walletAddress
  // @ts-expect-error: an agent's name is a string
  const wrong: number = agent.name
  // @ts-expect-error: no such route
  await alts.GET('/no-such-route')
  for await (const a of alts.paginate('/agents', { query: { limit: '50' } })) console.log(a.id, wallet, wrong)
  try {
    await alts.POST('/swap/execute', { body: { agentId: agent.id, tokenIn: 'ETH', tokenOut: 'USDC', amountIn: '0.01' } })
  } catch (e) {
    if (e instanceof ValidationError) console.log(e.code, e.field_errors)
  }
  return alts.end(alts.follow.swap('id'))
}
export const event = (body: string, headers: Record<string, string>) => verifyWebhook('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', body, headers).type
console.log(typeof createClient, typeof verifyWebhook)
`

/** The README's first steps with the client (its one block that imports the client). */
function readmeExample(): string {
  const blocks = [...readFileSync(join(ROOT, 'README.md'), 'utf8').matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!)
  const client = blocks.filter((b) => b.includes("from '@alts/client'"))
  expect(client).toHaveLength(1)
  return client[0]!
}

describe('the client as another project uses it', () => {
  it('npm pack of clients/typescript installs (with local copies of its dependencies, no network), type-checks with the README first steps, and loads in a scratch project', async () => {
    const tarballs = join(dir, 'tarballs')
    mkdirSync(tarballs)
    // prepack builds dist/ (JavaScript and declarations) with the package's own TypeScript.
    await run('npm', ['pack', '--pack-destination', tarballs], { cwd: join(ROOT, 'clients/typescript') })
    for (const folder of runtimeDependencies().values()) await run('npm', ['pack', '--ignore-scripts', '--pack-destination', tarballs, folder])
    const files = readdirSync(tarballs).map((f) => join(tarballs, f))
    expect(files.map((f) => f.split('/').at(-1)).sort()).toContain('alts-client-0.1.0.tgz')

    const project = join(dir, 'project')
    mkdirSync(project)
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'scratch', private: true, type: 'module' }))
    await run('npm', ['install', '--offline', '--ignore-scripts', '--no-audit', '--no-fund', ...files], { cwd: project })
    const installed = JSON.parse(readFileSync(join(project, 'node_modules/@alts/client/package.json'), 'utf8')) as { dependencies: object }
    expect(Object.keys(installed.dependencies).sort()).toEqual(['openapi-fetch', 'standardwebhooks'])

    writeFileSync(join(project, 'main.ts'), CONSUMER)
    writeFileSync(join(project, 'readme.ts'), readmeExample())
    writeFileSync(join(project, 'tsconfig.json'), JSON.stringify({
      compilerOptions: { target: 'es2022', module: 'nodenext', moduleResolution: 'nodenext', strict: true, noEmit: true, lib: ['es2022', 'dom', 'dom.iterable'], types: [] },
      include: ['main.ts', 'readme.ts'],
    }))
    // Type-checked by the root's TypeScript (7) and by the package's (5.9); the @ts-expect-error lines fail it if the types were loose.
    for (const tsc of [join(ROOT, 'node_modules/.bin/tsc'), join(ROOT, 'clients/typescript/node_modules/.bin/tsc')]) {
      const checked = await run(tsc, ['-p', '.'], { cwd: project }).then(() => 'ok', (e: { stdout: string }) => e.stdout)
      expect(checked).toBe('ok')
    }
    const loaded = await run(process.execPath, ['main.ts'], { cwd: project })
    expect(loaded.stdout.trim()).toBe('function function')
  }, 180_000)
})

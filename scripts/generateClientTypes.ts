import { writeFileSync } from 'node:fs'
import { defaultModelOf, loadModelCatalog } from '../src/adapters/llm/modelCatalog.ts'
import { openApiDocument } from '../src/http/openapi.ts'
import { generateTypes } from '../clients/typescript/scripts/generate.ts'

/**
 * `npm run client:generate`: writes clients/typescript/src/openapi.gen.ts from the OpenAPI
 * document the service serves with its default model catalog, built here without a server (the
 * document GET /api/v1/openapi.json answers; test/clientRoutes.test.ts compares the committed
 * file with the served one). `npm run client:generate -- http://127.0.0.1:3000` reads it from a
 * running service instead.
 */
const OUT = 'clients/typescript/src/openapi.gen.ts'
async function served(base: string): Promise<object> {
  const res = await fetch(`${base.replace(/\/+$/, '')}/api/v1/openapi.json`)
  if (!res.ok) throw new Error(`GET ${base}/api/v1/openapi.json answered ${res.status}`)
  return (await res.json()) as object
}
function built(): object {
  const models = loadModelCatalog()
  return openApiDocument({ models: [...models.keys()], defaultModel: defaultModelOf(models).id })
}
const from = process.argv[2]
writeFileSync(OUT, await generateTypes(from ? await served(from) : built()))
console.info(`wrote ${OUT} from ${from ?? 'the document of the default model catalog'}`)

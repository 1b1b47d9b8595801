import { writeFileSync } from 'node:fs'
import { defaultModelOf, loadModelCatalog } from '../src/adapters/llm/modelCatalog.ts'
import { openApiDocument } from '../src/http/openapi.ts'
import { generateTypes } from '../clients/typescript/scripts/generate.ts'

/**
 * `npm run client:generate`: writes clients/typescript/src/openapi.gen.ts from the OpenAPI
 * document the service serves with its default model catalog (the one GET /api/v1/openapi.json
 * answers; test/clientTypes.test.ts compares the committed file with the served document).
 */
const OUT = 'clients/typescript/src/openapi.gen.ts'
const models = loadModelCatalog()
const document = openApiDocument({ models: [...models.keys()], defaultModel: defaultModelOf(models).id })
writeFileSync(OUT, await generateTypes(document))
console.info(`wrote ${OUT}`)

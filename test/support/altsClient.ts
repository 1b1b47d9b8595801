import { createClient, type AltsClient, type ClientOptions } from '../../clients/typescript/src/index.ts'

/**
 * The first-party client (clients/typescript, imported from source) with a record of the
 * operations it called: `METHOD /path/{template}` as the OpenAPI document names them, whatever
 * the answer was.
 */
export function recordedClient(options: ClientOptions, called: Set<string>): AltsClient {
  const client = createClient(options)
  client.raw.use({ onRequest: ({ request, schemaPath }) => void called.add(`${request.method} ${schemaPath}`) })
  return client
}

/** The operations of an OpenAPI document, as `METHOD /path`. */
export function operationsOf(document: { paths: Record<string, Record<string, unknown>> }): string[] {
  return Object.entries(document.paths).flatMap(([path, methods]) => Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`))
}

/** The error a call threw (fails when it answered 2xx). */
export async function failure<T>(call: Promise<T>): Promise<any> {
  try {
    await call
  } catch (error) {
    return error
  }
  throw new Error('expected the call to fail')
}

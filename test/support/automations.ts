import type { Api } from './app.ts'
import { waitFor } from './waitFor.ts'

/**
 * Reads automation `id` until `done` holds (up to `timeoutMs`) and answers it as last read; a
 * timeout says what the automation last was.
 */
export async function automationUntil(api: Api, id: string, done: (a: any) => boolean, timeoutMs = 30_000): Promise<any> {
  let a: any
  await waitFor(async () => done((a = (await api('GET', `/automations/${id}`)).body)), timeoutMs).catch((err) => {
    throw new Error(`${(err as Error).message}: automation ${id} is ${JSON.stringify(a)}`)
  })
  return a
}

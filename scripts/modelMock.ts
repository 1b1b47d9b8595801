import { parseArgs } from 'node:util'
import { LLMock } from '@copilotkit/aimock'

const USAGE = `usage: npm run -s model-mock -- [--port 4010] [--host 127.0.0.1] [--fixtures FILE_OR_DIR]

Runs a scripted OpenAI-compatible model server (@copilotkit/aimock) for trying the service
without a provider account. Point the service at it:

  OPENAI_BASE_URL=http://127.0.0.1:4010/v1 OPENAI_API_KEY=mock npm start

Fixtures (aimock's JSON format) are matched first; any other chat request is answered with an
echo of the last user message, streamed when asked, with token usage.`

function main() {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      port: { type: 'string', default: '4010' },
      host: { type: 'string', default: '127.0.0.1' },
      fixtures: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
    strict: true,
  })
  if (values.help) {
    process.stdout.write(`${USAGE}\n`)
    return
  }
  const port = Number(values.port)
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error('--port must be 0..65535')
  const mock = new LLMock({ port, host: values.host, logLevel: 'info' })
  if (values.fixtures) {
    if (values.fixtures.endsWith('.json')) mock.loadFixtureFile(values.fixtures)
    else mock.loadFixtureDir(values.fixtures)
  }
  // Registered last, so scripted fixtures win: an echo answer for every other chat request.
  mock.on({ endpoint: 'chat', predicate: () => true }, (req) => {
    const last = [...req.messages].reverse().find((m) => m.role === 'user')
    const text = typeof last?.content === 'string' ? last.content : 'your message'
    return { content: `(scripted model) You said: ${text}` }
  })
  return mock.start().then((url) => {
    process.stdout.write(`model mock listening: OPENAI_BASE_URL=${url}/v1\n`)
    const stop = () => void mock.stop().then(() => process.exit(0))
    process.once('SIGINT', stop)
    process.once('SIGTERM', stop)
  })
}

Promise.resolve()
  .then(main)
  .catch((err) => {
    process.stderr.write(`model-mock: ${err instanceof Error ? err.message : String(err)}\n\n${USAGE}\n`)
    process.exit(1)
  })

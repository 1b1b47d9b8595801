import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { defaultModelOf, loadModelCatalog, modelView } from './modelCatalog.ts'

const dir = mkdtempSync(join(tmpdir(), 'catalog-'))
const entry = (id: string, extra: object = {}) => ({
  id, name: id, providerModel: `p/${id}`, inputCreditsPerMillion: 100, outputCreditsPerMillion: 200, contextWindow: 8192, supportsTools: true, ...extra,
})
function file(name: string, content: unknown): string {
  const path = join(dir, name)
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content))
  return path
}

describe('model catalog', () => {
  it('the built-in catalog has exactly one default, and every entry says whether it supports tools', () => {
    const models = loadModelCatalog()
    expect([...models.values()].filter((m) => m.default)).toHaveLength(1)
    expect(defaultModelOf(models).id).toBe('gpt-4o-mini')
    for (const m of models.values()) expect(typeof m.supportsTools).toBe('boolean')
  })

  it('loads a replacement file; entries without `default` are not the default', () => {
    const models = loadModelCatalog(file('ok.json', { models: [entry('a'), entry('b', { default: true, supportsTools: false })] }))
    expect([...models.keys()]).toEqual(['a', 'b'])
    expect(models.get('a')!.default).toBe(false)
    expect(defaultModelOf(models)).toMatchObject({ id: 'b', supportsTools: false })
    expect(modelView(models.get('b')!)).toEqual({
      id: 'b', name: 'b', providerModel: 'p/b', inputCreditsPerMillion: 100, outputCreditsPerMillion: 200, contextWindow: 8192, supportsTools: false, default: true,
    })
  })

  it('zero or two defaults is an error naming the file', () => {
    const none = file('none.json', { models: [entry('a'), entry('b')] })
    expect(() => loadModelCatalog(none)).toThrow(`Invalid model catalog ${none}: models: exactly one model must have "default": true (found 0)`)
    const two = file('two.json', { models: [entry('a', { default: true }), entry('b', { default: true })] })
    expect(() => loadModelCatalog(two)).toThrow(`Invalid model catalog ${two}: models: exactly one model must have "default": true (found 2: a, b)`)
  })

  it('refuses duplicate ids, missing or unknown fields, bad prices and unreadable files, naming the file', () => {
    const dup = file('dup.json', { models: [entry('a', { default: true }), entry('a')] })
    expect(() => loadModelCatalog(dup)).toThrow(/dup\.json: models\.1\.id: duplicate id "a"/)
    const { supportsTools: _, ...noTools } = entry('a', { default: true })
    expect(() => loadModelCatalog(file('notools.json', { models: [noTools] }))).toThrow(/notools\.json: models\.0\.supportsTools/)
    expect(() => loadModelCatalog(file('extra.json', { models: [entry('a', { default: true, apiKey: 'x' })] }))).toThrow(/extra\.json/)
    expect(() => loadModelCatalog(file('price.json', { models: [entry('a', { default: true, inputCreditsPerMillion: 1.5 })] }))).toThrow(/price\.json: models\.0\.inputCreditsPerMillion/)
    expect(() => loadModelCatalog(file('bad.json', '{ not json'))).toThrow(/Invalid model catalog .*bad\.json/)
    expect(() => loadModelCatalog(join(dir, 'missing.json'))).toThrow(/Invalid model catalog .*missing\.json/)
  })
})

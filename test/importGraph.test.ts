import { describe, expect, it } from 'vitest'
import { readFileSync } from 'node:fs'
import { importCircles, importGraph, type ImportEdge } from './support/importGraph.ts'
import { breaksLayer, folderEdges, folderOf, LAYER_EXCEPTIONS, LAYER_EXCEPTIONS_AT_MOST, LAYERS, layerRow } from './support/layers.ts'

/*
 * The structure docs/architecture.md states, checked over every import of src/ including those
 * for types only (test/architecture.test.ts checks the run-time direction with dependency-cruiser).
 */
const edges = importGraph()
const line = (e: ImportEdge) => `${e.from} -> ${e.specifier}${e.typeOnly ? ' (type)' : ''}`

describe('the import graph of src/, types included', () => {
  it('reads the whole tree', () => {
    expect(new Set(edges.map((e) => e.from)).size).toBeGreaterThan(300)
    expect(edges.some((e) => e.typeOnly)).toBe(true)
  })

  it('has no import circle between files, at run time or in types', () => {
    expect(importCircles(edges)).toEqual([])
  })

  it('finds a circle where there is one (the check can fail)', () => {
    const a = { from: 'src/a.ts', specifier: './b.ts', to: 'src/b.ts', typeOnly: true }
    const b = { from: 'src/b.ts', specifier: './a.ts', to: 'src/a.ts', typeOnly: false }
    expect(importCircles([a, b])).toEqual([['src/a.ts', 'src/b.ts']])
  })

  it('src/actors/runtime imports only node, pg, xstate, zod and itself: nothing of the app, not even a type', () => {
    const outside = edges.filter(
      (e) => e.from.startsWith('src/actors/runtime/') && !(e.to?.startsWith('src/actors/runtime/') || e.specifier.startsWith('node:') || ['pg', 'xstate', 'zod'].includes(e.specifier)),
    )
    expect(outside.map(line)).toEqual([])
  })

  it('the rest of src/ reaches the runtime through its one entry, src/actors/runtime/index.ts, types included', () => {
    const past = edges.filter((e) => !e.from.startsWith('src/actors/runtime/') && e.to?.startsWith('src/actors/runtime/') && e.to !== 'src/actors/runtime/index.ts')
    expect(past.map(line)).toEqual([])
  })

  it('the front doors (src/http, src/mcp, src/tools) name the composition root only through its declared Core (src/app/coreApi.ts)', () => {
    const intoApp = edges.filter((e) => /^src\/(http|mcp|tools)\//.test(e.from) && e.to?.startsWith('src/app/') && e.to !== 'src/app/coreApi.ts')
    expect(intoApp.map(line)).toEqual([])
  })
})

/* The layer table of docs/architecture.md ("Layers"), declared in test/support/layers.ts. */
describe('the layers of src/, types included', () => {
  const pair = (e: ImportEdge) => `${e.from} -> ${e.to}`
  const excepted = new Set(LAYER_EXCEPTIONS.flatMap((x) => x.to.map((to) => `${x.from} -> ${to}`)))

  it('every folder of src/ is a layer of the table, and the table is the one docs/architecture.md shows', () => {
    const folders = new Set(edges.map((e) => folderOf(e.from)))
    expect([...folders].filter((f) => !LAYERS.some((l) => l.folder === f))).toEqual([])
    const doc = readFileSync('docs/architecture.md', 'utf8')
    for (const l of LAYERS) expect(doc, `docs/architecture.md's layer table has the row of ${l.folder} (test/support/layers.ts, layerRow)`).toContain(`\n${layerRow(l)}\n`)
  })

  it('every import keeps its layer\'s rule, beyond the listed exceptions (a fixed one is taken off the list)', () => {
    const broken = new Set(edges.filter(breaksLayer).map(pair))
    expect([...broken].filter((p) => !excepted.has(p)), 'imports against the layers: fix them').toEqual([])
    expect([...excepted].filter((p) => !broken.has(p)), 'fixed: remove from LAYER_EXCEPTIONS').toEqual([])
  })

  it('the exceptions only shrink, each with its reason', () => {
    expect(excepted.size).toBeLessThanOrEqual(LAYER_EXCEPTIONS_AT_MOST)
    for (const x of LAYER_EXCEPTIONS) expect(x.why.length, x.from).toBeGreaterThan(10)
  })

  it('has no import cycle between folders once the excepted imports are set aside, types included', () => {
    expect(importCircles(folderEdges(edges.filter((e) => !excepted.has(pair(e)))))).toEqual([])
  })

  it('finds a folder cycle where there is one (the check can fail)', () => {
    const a = { from: 'src/adapters/chain/x.ts', specifier: '../../actors/launch/y.ts', to: 'src/actors/launch/y.ts', typeOnly: false }
    const b = { from: 'src/actors/launch/y.ts', specifier: '../../adapters/chain/z.ts', to: 'src/adapters/chain/z.ts', typeOnly: true }
    expect(importCircles(folderEdges([a, b]))).toEqual([['src/actors/launch', 'src/adapters/chain']])
    expect(breaksLayer(a)).toBe(true)
  })

  it('nothing in src/ imports scripts/ or bench/ (entries import src/, never the reverse)', () => {
    expect(edges.filter((e) => /(^|\/)(scripts|bench)\//.test(e.specifier)).map(line)).toEqual([])
  })
})

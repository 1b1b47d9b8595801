import { describe, expect, it } from 'vitest'
import { importCircles, importGraph, type ImportEdge } from './support/importGraph.ts'

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

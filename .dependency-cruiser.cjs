/** Import direction (docs/architecture.md), at run time: the runtime imports nothing of the app; domain code no outer layer; the front doors no adapter, runtime or dev code (test/importGraph.test.ts checks types and circles). */
module.exports = {
  forbidden: [
    {
      name: 'domain-imports-outer-layer',
      severity: 'error',
      comment: 'src/domain needs from outside only what its ports declare; adapters are handed in by the composition root.',
      from: { path: '^src/domain/' },
      to: { path: '^src/(http|adapters|dev|actors|app|mcp|tools)/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'front-door-imports-chain',
      severity: 'error',
      comment: 'The front doors (HTTP, MCP) reach the chain only through the core (src/app/core.ts): a library error is named by core.serviceErrorOf, an outage by a domain error.',
      from: { path: '^src/(http|mcp)/' },
      to: { path: '^src/(adapters/chain|dev)/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'runtime-imports-app',
      severity: 'error',
      comment: 'src/actors/runtime is a package of its own: node, pg, xstate and zod only; the app hands in what it needs (kinds, errors, compensations).',
      from: { path: '^src/actors/runtime/' },
      to: { path: '^src/', pathNot: '^src/actors/runtime/' },
    },
    {
      name: 'actor-imports-front-door',
      severity: 'error',
      comment: 'An actor kind calls the core and the tools through the ports the composition root hands in (src/domain/toolCall.types.ts), never src/app or a front door.',
      from: { path: '^src/actors/', pathNot: '^src/actors/runtime/' },
      to: { path: '^src/(app|http|mcp|tools)/' },
    },
    {
      name: 'front-door-imports-infrastructure',
      severity: 'error',
      comment: 'The front doors (HTTP, MCP, the tools) act through Core (src/app/coreApi.ts): no store, runtime or chain of their own.',
      from: { path: '^src/(http|mcp|tools)/' },
      to: { path: '^src/(adapters|dev|actors/runtime)/', dependencyTypesNot: ['type-only'] },
    },
  ],
  options: {
    // TypeScript 7 has no compiler API yet; babel strips the types as Node would, so an import
    // used only as a type (elided at run time) is not a dependency here.
    babelConfig: { fileName: '.babelrc.deps.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '\\.test\\.ts$' },
  },
}

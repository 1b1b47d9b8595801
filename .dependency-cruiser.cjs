/** Import direction (docs/architecture.md): domain code never imports an outer layer at run time; the front doors never import the chain at run time. */
module.exports = {
  forbidden: [
    {
      name: 'domain-imports-outer-layer',
      severity: 'error',
      comment: 'src/domain needs from outside only what its ports declare; adapters are handed in by the composition root.',
      from: { path: '^src/domain/' },
      to: { path: '^src/(http|adapters|dev|runtime|workflows|app|mcp|tools)/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'front-door-imports-chain',
      severity: 'error',
      comment: 'The front doors (HTTP, MCP) reach the chain only through the core (src/app/core.ts): a library error is named by core.serviceErrorOf, an outage by a domain error.',
      from: { path: '^src/(http|mcp)/' },
      to: { path: '^src/(adapters/chain|dev)/', dependencyTypesNot: ['type-only'] },
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

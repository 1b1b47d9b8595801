import { enableCompileCache } from 'node:module'

/**
 * The entry (`npm start`, and each node process of `WORKERS=N`). It turns on Node's compile cache
 * first, then boots (src/boot.ts): a process loads some 600 TypeScript files of its own and the
 * packages', and with the cache a restart reads each one's type-stripped text and compiled code
 * from disk instead of stripping and compiling it again (the cache is keyed by the file's
 * contents, so an edited file is compiled afresh). It is kept in the system's temporary
 * directory, or in NODE_COMPILE_CACHE; NODE_DISABLE_COMPILE_CACHE=1 turns it off. A directory
 * that cannot be written leaves the cache off, nothing else.
 */
enableCompileCache()
await import('./boot.ts')

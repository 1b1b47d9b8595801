import type { Account, ApiKey } from './ports.ts'

/** The account resource as the API shows it (camelCase). */
export function accountView(a: Account) {
  return {
    id: a.id,
    name: a.name,
    address: a.address ?? null,
    isOperator: a.isOperator,
    credits: a.credits,
    createdAt: a.createdAt.toISOString(),
    updatedAt: a.updatedAt.toISOString(),
  }
}
export type AccountView = ReturnType<typeof accountView>

/** The key resource: never its value or hash. */
export function apiKeyView(key: ApiKey) {
  return {
    id: key.id,
    name: key.name,
    hint: key.hint,
    scopes: key.scopes,
    expiresAt: key.expiresAt?.toISOString() ?? null,
    lastUsedAt: key.lastUsedAt?.toISOString() ?? null,
    createdAt: key.createdAt.toISOString(),
  }
}
export type ApiKeyView = ReturnType<typeof apiKeyView>

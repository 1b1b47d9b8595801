import { ServiceError } from '../domain/errors.ts'

/**
 * 401 `unauthorized` on the tool server, with the `WWW-Authenticate: Bearer` challenge that MCP
 * clients read (RFC 6750): no key, a malformed one, or one that is unknown, expired or deleted.
 */
export class McpUnauthorizedError extends ServiceError {
  constructor(message: string, { invalidToken }: { invalidToken: boolean }) {
    const challenge = invalidToken ? 'Bearer realm="mcp", error="invalid_token", error_description="Invalid, expired or deleted API key."' : 'Bearer realm="mcp"'
    super(message, { code: 'unauthorized', status: 401, headers: { 'WWW-Authenticate': challenge } })
  }
}

/** 404 `not_found`: the registry has no tool of this name. */
export class McpToolNotFoundError extends ServiceError {
  constructor(name: string) {
    super(`No tool named "${name.slice(0, 100)}".`, { code: 'not_found', status: 404 })
  }
}

/** 422 `idempotency_key_reused`: a tool call's `idempotencyKey` was used before with another tool or other arguments. */
export class McpIdempotencyKeyReusedError extends ServiceError {
  constructor() {
    super('This idempotencyKey was used with a different tool or different arguments.', { code: 'idempotency_key_reused', status: 422 })
  }
}

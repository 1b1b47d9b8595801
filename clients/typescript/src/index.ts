export { createClient, type AltsClient, type Call, type ClientOptions } from './client.ts'
export type { ClientPaths, JsonObject, Resource, ResourceOperation } from './paths.ts'
export {
  AltsError, ApiError, AuthenticationError, BadRequestError, ConflictError, ConnectionError, InsufficientCreditsError,
  NotFoundError, PermissionError, RateLimitError, ServerError, UnprocessableError, ValidationError, type ErrorBody,
} from './errors.ts'
export type { FollowOptions, StatusEvent } from './follow.ts'
export { KEYED_OPERATIONS } from './keyed.ts'
export type { components, operations, paths } from './openapi.gen.ts'
export type { Item, PagedPath, PaginateOptions } from './paging.ts'
export type { RetryOptions, Transport } from './transport.ts'
export { verifyWebhook, WebhookSignatureError, type WebhookEvent, type WebhookHeaders } from './webhooks.ts'

import type pg from 'pg'
import type { ActorRuntime } from '../../actors/actorRuntime.ts'
import { launchProgress, type LaunchInput, type LaunchVenue } from '../../actors/launch.machine.ts'
import { ForbiddenError, InvalidStateError, NotFoundError, ValidationError } from '../errors.ts'
import type { LaunchBody } from './launch.schema.ts'
import { DEFAULT_POLICY } from '../agents/policy.ts'
import type { AgentRecord, AgentsRepository } from '../agents/ports.ts'

export type LaunchesDeps = {
  pool: pg.Pool
  runtime: ActorRuntime
  /** The agent aggregate: the launching agent, its status and its effective policy. */
  agents: AgentsRepository
  /** Quote asset symbols each venue accepts (from the deployment manifest). */
  quotes: Record<LaunchVenue, readonly string[]>
  /** Synchronous checks before anything is created (funds, simulation); throws a ServiceError. */
  precheck(input: LaunchInput): Promise<void>
  /** True for a verified asset's symbol (case-insensitive), which no launch may take. */
  isVerifiedSymbol(symbol: string): Promise<boolean>
}

type LaunchContext = LaunchInput & {
  gas: string | null
  txHash: string | null
  tokenAddress: string | null
  poolAddress: string | null
  error: { code: string; message: string } | null
}

export function launchView(
  entry: { id: string; status: string; snapshot: { context: unknown } },
  times: { createdAt: string; updatedAt: string },
) {
  const c = entry.snapshot.context as LaunchContext
  return {
    id: entry.id,
    agentId: c.agentId,
    venue: c.venue,
    symbol: c.symbol,
    name: c.name,
    description: c.description,
    logoUrl: c.logoUrl,
    quote: c.quote,
    status: entry.status,
    progress: launchProgress(entry.status, c),
    tokenAddress: c.tokenAddress,
    poolAddress: c.poolAddress,
    txHash: c.txHash,
    error: c.error,
    createdAt: times.createdAt,
    updatedAt: times.updatedAt,
  }
}

export type LaunchesService = ReturnType<typeof createLaunchesService>

/**
 * Launches: validation against the agent, its policy and the venue, then a launch actor whose
 * id comes from the idempotency key, so a retried request finds the launch it already made.
 *
 * @example
 * const launch = await launches.create(accountId, 'venue-a', body, idempotency.resourceId)
 */
export function createLaunchesService(deps: LaunchesDeps) {
  const { pool, runtime } = deps

  async function times(id: string) {
    const { rows } = await pool.query<{ created_at: string | Date; updated_at: string | Date }>(
      'select created_at, updated_at from actor where id = $1',
      [id],
    )
    const r = rows[0]!
    return { createdAt: new Date(r.created_at).toISOString(), updatedAt: new Date(r.updated_at).toISOString() }
  }

  /**
   * The checks of a launch body against the venue and the account, for whichever of `agentId`,
   * `quote` and `seedAmount` are well-formed; so a body with a bad `symbol` and an unsupported
   * `quote` hears about both at once.
   */
  async function accountFieldErrors(
    accountId: string,
    venue: LaunchVenue,
    body: { agentId?: string | undefined; symbol?: string | undefined; quote?: string | undefined; seedAmount?: string | undefined },
  ): Promise<{ fieldErrors: Record<string, string>; agent?: AgentRecord | undefined }> {
    const fieldErrors: Record<string, string> = {}
    const allowed = deps.quotes[venue] ?? []
    if (body.quote !== undefined && !allowed.includes(body.quote)) {
      fieldErrors.quote = `Not a quote asset of ${venue}; one of ${allowed.join(', ')} (GET /api/v1/quotes?venue=${venue}).`
    }
    if (body.seedAmount !== undefined && venue !== 'self-funded') fieldErrors.seedAmount = 'Only self-funded launches take a seed amount.'
    if (body.symbol !== undefined && (await deps.isVerifiedSymbol(body.symbol))) {
      fieldErrors.symbol = `${body.symbol} is the symbol of a verified asset; a launch cannot take it.`
    }
    if (body.agentId === undefined) return { fieldErrors }
    const agent = await deps.agents.findOwned(accountId, body.agentId)
    if (!agent) fieldErrors.agentId = 'No such agent in this account.'
    else if (agent.status === 'deleted') fieldErrors.agentId = 'The agent is deleted.'
    return { fieldErrors, agent }
  }

  /** Validates a launch request as a real launch would; returns the machine input. */
  async function validate(accountId: string, venue: LaunchVenue, body: LaunchBody, launchId: string): Promise<LaunchInput> {
    const { fieldErrors, agent } = await accountFieldErrors(accountId, venue, body)
    if (Object.keys(fieldErrors).length > 0) throw new ValidationError(fieldErrors)
    const policy = { ...DEFAULT_POLICY, ...agent!.policy }
    if (policy.paused) throw new ForbiddenError('The agent policy is paused (kill switch): rule "paused".', 'policy_violation')
    return {
      launchId,
      accountId,
      agentId: body.agentId,
      venue,
      symbol: body.symbol,
      name: body.name,
      description: body.description ?? null,
      logoUrl: body.logoUrl ?? null,
      quote: body.quote,
      seedAmount: body.seedAmount ?? null,
    }
  }

  return {
    validate,

    /** The venue's and the account's refusals of the well-formed fields of a launch body. */
    accountFieldErrors: async (...args: Parameters<typeof accountFieldErrors>) => (await accountFieldErrors(...args)).fieldErrors,

    async create(accountId: string, venue: LaunchVenue, body: LaunchBody, launchId: string) {
      const existing = await runtime.get(launchId)
      if (existing && (existing.accountId !== accountId || existing.kind.kind !== 'launch')) throw new NotFoundError('Launch')
      if (!existing) {
        const input = await validate(accountId, venue, body, launchId)
        await deps.precheck(input)
        try {
          await runtime.create('launch', { id: launchId, accountId, input })
        } catch (err) {
          // A concurrent request with the same key created it first.
          if ((err as { code?: string }).code !== '23505') throw err
        }
      }
      // A retry after a crash between creating the launch and starting it starts it now.
      let entry = await runtime.get(launchId)
      if (entry?.status === 'pending') {
        entry = await runtime.send(launchId, { type: 'launch.begin' }).catch((err) => {
          if (err instanceof InvalidStateError) return runtime.get(launchId)
          throw err
        })
      }
      return launchView(entry!, await times(launchId))
    },

    async get(accountId: string, id: string) {
      const entry = await runtime.get(id)
      if (!entry || entry.kind.kind !== 'launch' || entry.accountId !== accountId) throw new NotFoundError('Launch')
      return launchView(entry, await times(id))
    },
  }
}

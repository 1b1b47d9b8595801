import { NotFoundError } from '../errors.ts'
import { launchResource, type Launch } from './launchResource.ts'
import type { LaunchPorts } from './ports.ts'

export type GetLaunchDeps = Pick<LaunchPorts, 'actors'>
/** `agentId` narrows to one agent's launches (a tool acting for an agent sees only its own). */
export type GetLaunchInput = { accountId: string; launchId: string; agentId?: string | undefined }

/**
 * One launch of the account with its status and progress (`GET /launch/:id`, `get_launch_status`).
 *
 * @example
 * const launch = await getLaunch(deps, { accountId, launchId })
 */
export async function getLaunch(deps: GetLaunchDeps, input: GetLaunchInput): Promise<Launch> {
  const r = await deps.actors.find(input.launchId)
  if (!r || !r.isLaunch || r.accountId !== input.accountId) throw new NotFoundError('Launch')
  if (input.agentId !== undefined && r.context.agentId !== input.agentId) throw new NotFoundError('Launch')
  return launchResource(r)
}

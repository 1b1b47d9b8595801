import { z } from 'zod'
import { previewBody, readLaunchRequest, readPreviewRequest } from '../domain/launches/launch.schema.ts'
import { stableUuid } from '../domain/util/stableUuid.ts'
import { defineTool, startedChild, type ToolCall } from './tool.ts'

/** How long launch_token waits for the launch to go live before answering it as it stands. */
const LAUNCH_WAIT_MS = 20_000

const launchArgs = previewBody.omit({ agentId: true })
type LaunchArgs = z.infer<typeof launchArgs>

const previewOf = (call: ToolCall, args: LaunchArgs) => call.core.previewLaunch(readPreviewRequest(call.accountId, { ...args, agentId: call.agentId }))

const launchFields =
  'venue is venue-a (bonding curve), venue-b (an AMM pool opened with the whole supply) or self-funded (the agent ' +
  'deploys the token and seeds its pool from its own wallet: seedAmount, a decimal amount of the quote asset). symbol is ' +
  '1-11 characters of A-Z and 0-9 and may not be a verified asset\'s (ETH, USDC, the stocks); quote is the quote asset ' +
  'symbol the venue takes (ETH or USDC).'

// Scope `trade`, as POST /launch/preview: a preview is the first half of a launch and runs the
// launch's checks and simulation against the agent wallet, so a read-only key does not get it.
export const launchPreviewTool = defineTool({
  name: 'launch_preview',
  description:
    'Preview launching a new token from the agent wallet, with nothing sent: the same checks and simulation as ' +
    'launch_token, the predicted token address, the gas and its cost in ETH and USD, the starting price and market cap, ' +
    `and the venue's fees. ${launchFields}`,
  args: launchArgs,
  scope: 'trade',
  movesFunds: false,
  run: previewOf,
})

export const launchTokenTool = defineTool({
  name: 'launch_token',
  description:
    'Launch a new token on chain from the agent wallet, within the agent policy (kill switch, token lists for the quote ' +
    'asset, USD caps on a self-funded seed). Waits up to 20 seconds for it to go live and answers the launch: status ' +
    '(live or failed, or still pending), tokenAddress, poolAddress, txHash. If it is still pending, follow it with ' +
    `get_launch_status. Preview with launch_preview first. ${launchFields}`,
  args: launchArgs,
  scope: 'trade',
  movesFunds: true,
  // The launch id comes from the call id: a retried tool call finds its launch and launches nothing new.
  // Called for a chat turn or a run, the launch is its child: the turn hears whether it went live when the chain has it.
  run: async (call, { venue, ...args }) =>
    startedChild(
      call,
      await call.core.launchToken({
        ...readLaunchRequest(call.accountId, venue, { ...args, agentId: call.agentId }),
        launchId: stableUuid(call.accountId, 'tool/launch_token', call.callId),
        waitMs: LAUNCH_WAIT_MS,
        parentId: call.parent?.actorId,
      }),
    ),
  preview: previewOf,
})

export const getLaunchStatusTool = defineTool({
  name: 'get_launch_status',
  description:
    "Read one of the agent's launches by its id (from launch_token): status (pending, simulating, submitting, " +
    'confirming, live, failed) with its progress, and once live the tokenAddress, poolAddress and txHash; the error ' +
    'when it failed.',
  args: z.strictObject({ launchId: z.uuid('Must be a launch id from launch_token.') }),
  scope: 'read',
  movesFunds: false,
  run: ({ core, accountId, agentId }, { launchId }) => core.getLaunch({ accountId, launchId, agentId }),
})

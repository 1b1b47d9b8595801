import { z } from 'zod'
import { whitelistAddBody, whitelistDeleteBody } from '../domain/agents/agent.schema.ts'
import { transferInput } from '../domain/wallet/wallet.schema.ts'
import { stableUuid } from '../domain/util/stableUuid.ts'
import { defineTool, startedChild, type ToolCall } from './tool.ts'

const transferArgs = transferInput.omit({ agentId: true })

export const getPortfolioTool = defineTool({
  name: 'get_portfolio',
  description:
    "Read the agent wallet's holdings: ETH and every token it holds, each with its balance, USD price and value, and " +
    'for tokens it bought, received (valued at their block) or claimed as creator fees the cost basis and unrealised PnL; ' +
    'plus the total value in USD. Tokens with no ' +
    'market show a null price and value.',
  args: z.strictObject({}),
  scope: 'read',
  movesFunds: false,
  run: ({ core, accountId, agentId }) => core.getPortfolio({ accountId, agentId }),
})

export const walletTransferTool = defineTool({
  name: 'wallet_transfer',
  description:
    'Send ETH or a token from the agent wallet to an address on its whitelist (see get_whitelist; a newly added ' +
    'address can only be used after its hold). Within the agent policy (per-transaction and daily USD caps, token ' +
    'lists, kill switch). `token` is a symbol (ETH, USDC, TSLAx) or a 0x token address; `amount` is a decimal string ' +
    'in whole units of the token, e.g. "12.5". Answers the transfer with its status and tx hash.',
  args: transferArgs,
  scope: 'trade',
  movesFunds: true,
  // The operation id comes from the call id: a retried tool call finds its transfer and sends nothing new.
  run: async (call, args) =>
    startedChild(
      call,
      await call.core.transferFunds({
        ...args, accountId: call.accountId, agentId: call.agentId, operationId: stableUuid(call.accountId, 'tool/wallet_transfer', call.callId), parentId: call.parent?.actorId,
      }),
    ),
  preview: (call, args) => call.core.previewTransfer({ ...args, accountId: call.accountId, agentId: call.agentId }),
})

export const getWhitelistTool = defineTool({
  name: 'get_whitelist',
  description:
    'List the addresses the agent may transfer to (wallet_transfer refuses any other), each with its label, whether ' +
    'it is usable yet and when its hold ends (usableAt).',
  args: z.strictObject({}),
  scope: 'read',
  movesFunds: false,
  run: ({ core, accountId, agentId }) => core.getWhitelist({ accountId, agentId }),
})

/** A whitelist change made by a tool call is journaled as the caller's key, naming the tool. */
const actorOf = (call: ToolCall, tool: string) => ({ type: 'key' as const, keyId: call.keyId ?? null, tool })

export const addToWhitelistTool = defineTool({
  name: 'add_to_whitelist',
  description:
    'Add an address (with an optional label) to the addresses the agent may transfer to. It becomes usable only after ' +
    "the service's whitelist hold (usableAt in the answer); adding an address already listed only changes its label. " +
    'Needs an admin key; the change is recorded in the agent audit trail.',
  args: whitelistAddBody,
  scope: 'admin',
  movesFunds: false,
  run: (call, args) =>
    call.core.addToWhitelist({ accountId: call.accountId, agentId: call.agentId, address: args.address, label: args.label, actor: actorOf(call, 'add_to_whitelist') }),
})

export const removeFromWhitelistTool = defineTool({
  name: 'remove_from_whitelist',
  description:
    'Remove an address from the addresses the agent may transfer to; it takes effect at once. Needs an admin key; the ' +
    'change is recorded in the agent audit trail.',
  args: whitelistDeleteBody,
  scope: 'admin',
  movesFunds: false,
  run: async (call, args) => ({
    ...(await call.core.removeFromWhitelist({ accountId: call.accountId, agentId: call.agentId, address: args.address, actor: actorOf(call, 'remove_from_whitelist') })),
    deleted: true,
  }),
})

/** The wallet's tools, in the order a model's tool list shows them. */
export const WALLET_TOOLS = [getPortfolioTool, walletTransferTool, getWhitelistTool, addToWhitelistTool, removeFromWhitelistTool] as const

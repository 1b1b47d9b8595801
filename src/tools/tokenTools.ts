import { z } from 'zod'
import { boardQuery } from '../domain/tokens/tokens.schema.ts'
import { MAX_PRICE_TOKENS } from '../domain/tokens/getPrice.ts'
import { defineTool } from './tool.ts'

const tokenName = z.string().min(1).max(64).describe('A symbol (ETH, WETH, USDC, a stock such as TSLAx) or a 0x token address.')

export const getPriceTool = defineTool({
  name: 'get_price',
  description:
    'Read current USD prices of up to 50 tokens, all at one block: quote assets (ETH, USDC), tokenized stocks (TSLAx, ' +
    'NVDAx, AAPLx) and launched tokens by 0x address. Launched tokens also show their 24 h change, 24 h volume, market ' +
    'cap, venue and whether they still trade on their bonding curve.',
  args: z.strictObject({ tokens: z.array(tokenName).min(1).max(MAX_PRICE_TOKENS).describe('The tokens to price.') }),
  scope: 'read',
  movesFunds: false,
  run: ({ core }, { tokens }) => core.getPrice({ tokens, field: 'tokens' }),
})

export const listTokensTool = defineTool({
  name: 'list_tokens',
  description:
    'List launched tokens, newest first: symbol, name, address, venue, quote asset, creator agent, whether it graduated ' +
    'from its curve and is verified, its price, market cap, 24 h volume and 24 h change in USD. Pass nextCursor back as ' +
    'cursor for the next page.',
  args: z.strictObject({
    limit: z.number().int().min(1).max(100).default(20).describe('Tokens per page, 1-100.'),
    cursor: boardQuery.shape.cursor.describe('nextCursor of the previous page.'),
    venue: boardQuery.shape.venue.describe('Only tokens of this venue.'),
  }),
  scope: 'read',
  movesFunds: false,
  run: ({ core }, args) => core.listTokens(args),
})

export const getTokenTool = defineTool({
  name: 'get_token',
  description:
    'Read one launched token by its 0x address: price, market cap, 24 h volume, change and trade count, its curve or pool ' +
    'reserves, progress toward graduation (venue-a), its creator and the creator fees it has earned.',
  args: z.strictObject({ address: z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'A 0x token address.').describe('The token address.') }),
  scope: 'read',
  movesFunds: false,
  run: ({ core }, { address }) => core.getToken({ address }),
})

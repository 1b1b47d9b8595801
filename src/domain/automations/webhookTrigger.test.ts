import { describe, expect, it } from 'vitest'
import { readHookMessage } from './webhookTrigger.ts'

describe('readHookMessage', () => {
  const trigger = { type: 'webhook' as const, values: { amount: { type: 'amount' as const, arg: 'amountIn', max: '1' }, side: { type: 'enum' as const, values: ['buy', 'sell'] } } }
  it('takes the header id first, else the body id, and maps values to their arguments', () => {
    expect(readHookMessage(trigger, { headerId: 'msg_1', body: { id: 'other', amount: '0.5' } })).toEqual({ messageId: 'msg_1', values: { amountIn: '0.5' } })
    expect(readHookMessage(trigger, { headerId: undefined, body: { id: 'tv-1', amount: '0.25', side: 'buy', note: 'ignored' } })).toEqual({ messageId: 'tv-1', values: { amountIn: '0.25', side: 'buy' } })
    // Amounts are decimal strings, as everywhere in the API: a JSON number is named as a bad field.
    expect(readHookMessage(trigger, { headerId: 'm', body: { amount: 0.25 } })).toEqual({ errors: { amount: expect.any(String) } })
  })
  it('names every bad field', () => {
    expect(readHookMessage(trigger, { headerId: undefined, body: { amount: '2', side: 'hold' } })).toEqual({
      errors: { id: expect.stringContaining('Required'), amount: 'At most 1.', side: 'One of buy, sell.' },
    })
    expect(readHookMessage({ type: 'webhook', values: { amount: { type: 'amount', required: true } } }, { headerId: 'm', body: {} })).toEqual({ errors: { amount: 'Required.' } })
  })
})

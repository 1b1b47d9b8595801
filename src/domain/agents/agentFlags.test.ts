import { describe, expect, it } from 'vitest'
import { agentFlags } from './agentFlags.ts'

const eth = (balance: string) => ({ symbol: 'ETH', address: null, balance })
const credits = { credits: 50_000, reserved: 0 }

describe('agentFlags', () => {
  it('flags little value, or too little ETH for gas, as a low balance', () => {
    expect(agentFlags({ portfolio: { totalValueUsd: '3.20', holdings: [eth('1')] }, credits }).lowBalance).toBe(true)
    expect(agentFlags({ portfolio: { totalValueUsd: '5000.00', holdings: [eth('0.001')] }, credits }).lowBalance).toBe(true)
    expect(agentFlags({ portfolio: { totalValueUsd: '5000.00', holdings: [eth('1')] }, credits }).lowBalance).toBe(false)
  })
  it('counts held credits as spent, and leaves the balance unknown without a portfolio', () => {
    expect(agentFlags({ portfolio: null, credits: { credits: 1500, reserved: 600 } })).toEqual({ lowBalance: null, lowCredits: true })
    expect(agentFlags({ portfolio: null, credits: { credits: 1500, reserved: 0 } })).toEqual({ lowBalance: null, lowCredits: false })
  })
})

import { describe, expect, it } from 'vitest'
import { FEES_KEY, ledgerTokens, performanceSeries, pnlFields, pnlLedger, pnlTotals } from './pnlRules.ts'

const usdc = '0xusdc'
const tok = '0xtok'
const buy = (amount: bigint, usd: string, cost = BigInt(usd.replace('.', '')) * 10_000n) => ({ kind: 'swap' as const, tokenIn: usdc, amountIn: cost.toString(), tokenOut: tok, amountOut: amount.toString(), valueInUsd: usd })
const sell = (amount: bigint, usd: string) => ({ kind: 'swap' as const, tokenIn: tok, amountIn: amount.toString(), tokenOut: usdc, amountOut: (BigInt(usd.replace('.', '')) * 10_000n).toString(), valueInUsd: usd })

describe('cost basis and PnL by average cost', () => {
  it('a hand computation to the cent', () => {
    // 1,000 TOK for $100.00 and 250 for $50.00: 1,250 at $150.00. 500 sold for $80.00: the basis
    // loses 150 x 500/1250 = $60.00, realised +$20.00, 750 left at $90.00.
    const book = pnlLedger([buy(1000n, '100.00'), buy(250n, '50.00'), sell(500n, '80.00')])
    expect(book.get(tok)).toEqual({ amount: 750n, basisCents: 9000n, realisedCents: 2000n })
    // USDC came from the faucet (no recorded cost): spending it realises nothing; the $80 received has a basis.
    expect(book.get(usdc)).toEqual({ amount: 80_000_000n, basisCents: 8000n, realisedCents: 0n })
    // 750 TOK worth $112.35 now: unrealised +$22.35.
    expect(pnlFields(book.get(tok), '112.35')).toEqual({ costBasisUsd: '90.00', unrealisedPnlUsd: '22.35', realisedPnlUsd: '20.00' })
    expect(pnlTotals(book, [{ address: tok, valueUsd: '112.35' }, { address: usdc, valueUsd: '80.00' }], (a) => a!)).toEqual({
      costBasisUsd: '170.00', unrealisedPnlUsd: '22.35', realisedPnlUsd: '20.00', gasUsd: '0.00',
    })
  })

  it('a loss, a full exit, and a transfer out realised at its value', () => {
    const book = pnlLedger([buy(300n, '30.00'), sell(100n, '7.01'), { kind: 'transfer', token: tok, amount: '200', valueUsd: '25.00' }])
    // Sale: basis share $10.00, realised -$2.99; transfer: share $20.00, realised +$5.00.
    expect(book.get(tok)).toEqual({ amount: 0n, basisCents: 0n, realisedCents: 201n })
    expect(pnlFields(book.get(tok), '0.00')).toEqual({ costBasisUsd: '0.00', unrealisedPnlUsd: '0.00', realisedPnlUsd: '2.01' })
    expect(pnlFields(undefined, '1.00')).toEqual({ costBasisUsd: null, unrealisedPnlUsd: null, realisedPnlUsd: null })
  })
})

describe('gas', () => {
  it('is a realised loss of the book, not of a holding', () => {
    const book = pnlLedger([{ ...buy(1000n, '100.00'), gasUsd: '0.31' }, { ...sell(500n, '80.00'), gasUsd: '0.29' }])
    expect(book.get(tok)!.realisedCents).toBe(3000n)
    expect(pnlTotals(book, [{ address: tok, valueUsd: '60.00' }], (a) => a!)).toMatchObject({ realisedPnlUsd: '29.40', gasUsd: '0.60' })
  })
})

describe('performance series', () => {
  it('replays the ledger up to each point', () => {
    const at = (ms: number) => ({ at: new Date(ms) })
    const ops = [{ ...buy(1000n, '100.00'), ...at(10) }, { ...sell(500n, '80.00'), ...at(20) }, { kind: 'transfer' as const, token: tok, amount: '100', valueUsd: '15.00', ...at(30) }]
    const points = performanceSeries(ops, [5, 10, 25, 40])
    expect(points.map((p) => [p.basisCents, p.realisedCents, p.withdrawalsCents, p.operations])).toEqual([
      [0n, 0n, 0n, 0],
      [10_000n, 0n, 0n, 1],
      // The sale: basis 100 x 500/1000 = 50 off, +30 realised; USDC 80 acquired at 80.
      [5_000n + 8_000n, 3_000n, 0n, 2],
      // The transfer of 100 of the 500 left: 10 off the basis, +5 realised, 15 withdrawn.
      [4_000n + 8_000n, 3_500n, 1_500n, 3],
    ])
  })
})

describe('transfers in', () => {
  it('are acquired at their value at their block; unpriced ones at $0', () => {
    const book = pnlLedger([
      { kind: 'receive', token: tok, amount: '400', valueUsd: '20.00' },
      { kind: 'receive', token: tok, amount: '100', valueUsd: null },
      sell(250n, '15.00'),
    ])
    // 500 held at $20.00; 250 sold for $15.00: share $10.00, realised +$5.00.
    expect(book.get(tok)).toEqual({ amount: 250n, basisCents: 1000n, realisedCents: 500n })
  })

  it('count as deposits, and the value held is priced at the last price an operation saw', () => {
    const at = (ms: number) => ({ at: new Date(ms) })
    const ops = [
      { kind: 'receive' as const, token: tok, amount: '1000', valueUsd: '50.00', ...at(10) },
      { kind: 'receive' as const, token: '0xnew', amount: '7', valueUsd: null, ...at(11) },
      { ...sell(300n, '21.00'), ...at(20) },
    ]
    const points = performanceSeries(ops, [5, 15, 25])
    expect(points.map((p) => [p.depositsCents, p.valueCents, p.basisCents])).toEqual([
      [0n, 0n, 0n],
      // 1,000 TOK at 50.00/1000; 7 NEW never priced: its basis ($0).
      [5_000n, 5_000n, 5_000n],
      // 700 TOK at the sale's 21.00/300 = 49.00; the $21.00 USDC at 21.00 for its amount.
      [5_000n, 4_900n + 2_100n, 3_500n + 2_100n],
    ])
  })
})

describe('launches and creator-fee claims', () => {
  const weth = '0xweth'
  it('a self-funded seed is disposed of for $0; claimed fees are income, held ones acquired at that value', () => {
    const book = pnlLedger([
      { kind: 'receive', token: weth, amount: '500', valueUsd: '1500.00' },
      { kind: 'launch', token: tok, allocation: '0', seed: { token: weth, amount: '250' }, gasUsd: '0.40' },
      { kind: 'claim', claimed: [{ token: weth, amount: '5', valueUsd: '15.00', held: true }, { token: tok, amount: '9', valueUsd: '2.00', held: false }] },
    ])
    // Seed: 250 of 500 at $1,500.00 = $750.00 realised as the launch's cost.
    expect(book.get(weth)).toEqual({ amount: 255n, basisCents: 75_000n + 1_500n, realisedCents: -75_000n })
    expect(book.has(tok)).toBe(false)
    expect(book.get(FEES_KEY)!.realisedCents).toBe(1_700n)
    expect(pnlTotals(book, [], (a) => a!)).toMatchObject({ realisedPnlUsd: '-733.40', gasUsd: '0.40' })
    // Fees paid to a payout wallet are withdrawn at once.
    const [p] = performanceSeries([{ kind: 'claim', claimed: [{ token: tok, amount: '9', valueUsd: '2.00', held: false }], at: new Date(1) }], [2])
    expect([p!.withdrawalsCents, p!.realisedCents, p!.valueCents]).toEqual([200n, 200n, 0n])
  })
})

describe('prices seen by the index', () => {
  it('value a holding after an operation priced it, the later one winning', () => {
    const at = (ms: number) => ({ at: new Date(ms) })
    const ops = [{ kind: 'receive' as const, token: tok, amount: (10n ** 18n * 4n).toString(), valueUsd: '2.00', ...at(10) }]
    const seen = [{ token: tok, at: new Date(20), usd18: 75n * 10n ** 16n }, { token: '0xother', at: new Date(21), usd18: 10n ** 18n }]
    const points = performanceSeries(ops, [15, 25], seen)
    // 4 whole TOK: at the transfer's $0.50, then at the index's $0.75.
    expect(points.map((p) => p.valueCents)).toEqual([200n, 300n])
    expect(ledgerTokens([...ops, buy(1n, '1.00')])).toEqual([tok, usdc])
  })
})

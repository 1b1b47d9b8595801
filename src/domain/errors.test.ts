import { describe, expect, it } from 'vitest'
import {
  AgentDeletedError, ChainNotConfiguredError, IdempotencyKeyInProgressError, InsufficientFundsError, OperationFailedError,
  OperationInProgressError, ServiceError, SimulationRevertedError,
} from './errors.ts'

describe('refusals are ServiceError subclasses with their code and status', () => {
  it('insufficient_funds: in wei by default, or worded by the caller', () => {
    expect(new InsufficientFundsError({ needed: 5n, balance: 1n })).toMatchObject({
      code: 'insufficient_funds', status: 422, message: 'The agent wallet holds 1 wei but this needs about 5 wei (value plus gas).',
    })
    const e = new InsufficientFundsError({ message: 'The agent holds 0 USDC.' })
    expect(e).toBeInstanceOf(ServiceError)
    expect(e).toMatchObject({ code: 'insufficient_funds', status: 422, message: 'The agent holds 0 USDC.' })
  })

  it('simulation_reverted prefixes a reason, keeps a recorded message', () => {
    expect(new SimulationRevertedError('boom').message).toBe('The transaction would revert: boom')
    expect(new SimulationRevertedError({ message: 'as recorded' })).toMatchObject({ code: 'simulation_reverted', message: 'as recorded' })
  })

  it('operations: in progress per kind, recorded failures with their code', () => {
    expect(new OperationInProgressError({ kind: 'claim' })).toMatchObject({
      code: 'claim_in_progress', status: 409, headers: { 'Retry-After': '2' }, message: 'A fee claim of this agent is still in flight; retry when it has ended.',
    })
    expect(new OperationFailedError({ code: 'submit_failed', message: 'm' })).toMatchObject({ code: 'submit_failed', status: 502 })
    expect(new OperationFailedError({ code: 'claim_failed', message: 'm' })).toMatchObject({ code: 'claim_failed', status: 422 })
  })

  it('idempotency in progress, deleted agent, no chain', () => {
    expect(new IdempotencyKeyInProgressError({ retryAfterSeconds: 3 })).toMatchObject({ status: 409, headers: { 'Retry-After': '3' } })
    expect(new IdempotencyKeyInProgressError()).toMatchObject({ message: 'Idempotency key vanished; retry.', headers: undefined })
    expect(new AgentDeletedError()).toMatchObject({ code: 'invalid_state', status: 409 })
    expect(new ChainNotConfiguredError()).toMatchObject({ code: 'chain_unavailable', status: 503 })
  })
})

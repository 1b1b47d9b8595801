import { ServiceError } from '../errors.ts'

/** 422 `automation_budget_exhausted`: a firing, or a swap or transfer of a run it started, would take the automation past its `max_spend_usd`. */
export class AutomationBudgetExhaustedError extends ServiceError {
  constructor(message: string) {
    super(message, { code: 'automation_budget_exhausted', status: 422 })
  }
}

/** 401 `invalid_signature`: a signal webhook whose Standard Webhooks signature is missing (when required), forged or stale. */
export class InvalidHookSignatureError extends ServiceError {
  constructor(message: string) {
    super(`${message} Nothing was fired.`, { code: 'invalid_signature', status: 401 })
  }
}

import { ServiceError } from '../errors.ts'

/** 422 `automation_budget_exhausted`: a firing would take the automation past its `max_spend_usd`. */
export class AutomationBudgetExhaustedError extends ServiceError {
  constructor(message: string) {
    super(message, { code: 'automation_budget_exhausted', status: 422 })
  }
}

import { ServiceError } from '../errors.ts'

/** 422 `automation_budget_exhausted`: a firing, or a swap or transfer of a run it started, would take the automation past its `max_spend_usd`. */
export class AutomationBudgetExhaustedError extends ServiceError {
  constructor(message: string) {
    super(message, { code: 'automation_budget_exhausted', status: 422 })
  }
}

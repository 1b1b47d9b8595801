import { ServiceError } from '../errors.ts'
import type { PolicyScope } from './ownerPolicyRules.ts'

/** An operation an owner's policy rejects: 422 `policy_violation`, naming the rule and its scope. */
export class OwnerPolicyViolationError extends ServiceError {
  readonly rule: string
  readonly scope: PolicyScope
  constructor({ rule, scope, reason }: { rule: string; scope: PolicyScope; reason: string }) {
    super(`Rejected by the ${scope} policy's rule "${rule}" (${reason}).`, { code: 'policy_violation', status: 422 })
    this.rule = rule
    this.scope = scope
  }
}

import { ServiceError, ValidationError } from '../errors.ts'
import { emptyFieldErrors } from '../fieldErrors.ts'

/** 409 `skill_slug_taken`: the account has a custom skill with this slug already. */
export class SkillSlugTakenError extends ServiceError {
  constructor(slug: string) {
    super(`You have a custom skill with the slug "${slug}" already; choose another or update that one.`, { code: 'skill_slug_taken', status: 409 })
  }
}

/** 422 naming each tool of `tools` that the registry does not have (`tools.<i>`). */
export class UnknownToolsError extends ValidationError {
  constructor(indexes: number[]) {
    const fieldErrors = emptyFieldErrors()
    for (const i of indexes) fieldErrors[`tools.${i}`] = 'Not a tool of the registry; see the tools of GET /api/v1/skills.'
    super(fieldErrors)
  }
}

/** 422 naming each entry of an agent's `skills` that is no skill the account may use (`skills.<i>`). */
export class UnknownSkillsError extends ValidationError {
  constructor(indexes: number[]) {
    const fieldErrors = emptyFieldErrors()
    for (const i of indexes) fieldErrors[`skills.${i}`] = UNKNOWN_SKILL
    super(fieldErrors)
  }
}

export const UNKNOWN_SKILL = 'Unknown skill; see GET /api/v1/skills, your GET /api/v1/skills/custom and GET /api/v1/skills/registry.'

import { describe, expect, it } from 'vitest'
import { resolveAgentSkills } from './resolveAgentSkills.ts'
import { checkAgentSkills } from './checkAgentSkills.ts'
import type { CustomSkillRecord, CustomSkillsRepository } from './ports.ts'
import { UnknownSkillsError } from './errors.ts'

const ME = '11111111-1111-4111-8111-111111111111'
const THEM = '22222222-2222-4222-8222-222222222222'

const skill = (accountId: string, slug: string, over: Partial<CustomSkillRecord> = {}): CustomSkillRecord => ({
  id: `${accountId}-${slug}`, accountId, slug, name: slug, description: '', instructions: `do ${slug}`, tools: [], parameters: null,
  tags: [], isPublic: false, version: '1.0.0', createdAt: '', updatedAt: '', cursorAt: '', ...over,
})

/** An in-memory repository with the same visibility rule: own by slug, others' only when public. */
function memory(rows: CustomSkillRecord[]): Pick<CustomSkillsRepository, 'findUsable'> {
  return {
    async findUsable(accountId, refs) {
      return rows.filter((r) => refs.some((ref) =>
        ref.slug === r.slug && (r.accountId === accountId ? ref.author === undefined || ref.author === accountId : ref.author === r.accountId && r.isPublic)))
    },
  }
}

const rows = [
  skill(ME, 'mine', { tools: ['swap_quote'] }),
  skill(THEM, 'shared', { isPublic: true, tools: ['get_price', 'transfer_everything'] }),
  skill(THEM, 'private', { tools: ['launch_token'] }),
]
const deps = { skills: memory(rows) as CustomSkillsRepository, toolNames: new Set(['swap_quote', 'get_price', 'launch_token']) }

describe('resolveAgentSkills', () => {
  it('grants always-on, listed built-in and usable custom tools, never one outside the registry', async () => {
    const r = await resolveAgentSkills(deps, { accountId: ME, skills: ['mine', `${THEM}/shared`, `${THEM}/private`, 'gone'] })
    expect(r.tools).toEqual(['get_agent', 'get_portfolio', 'get_price', 'get_whitelist', 'swap_quote'])
    expect(r.unavailable).toEqual([`${THEM}/private`, 'gone'])
    expect(r.instructions).toContain('do mine')
    expect(r.instructions).toContain('do shared')
    expect(r.instructions).not.toContain('do private')
  })

  it('the same skill named twice (slug and author/slug) enters the prompt once', async () => {
    const r = await resolveAgentSkills(deps, { accountId: ME, skills: ['mine', `${ME}/mine`] })
    expect(r.instructions.match(/do mine/g)).toHaveLength(1)
  })
})

describe('checkAgentSkills', () => {
  it('names each entry the account may not use, a private one of another account like a missing one', async () => {
    await expect(checkAgentSkills(deps, { accountId: ME, skills: ['trading', 'mine', `${THEM}/shared`] })).resolves.toBeUndefined()
    const err = await checkAgentSkills(deps, { accountId: ME, skills: ['trading', `${THEM}/private`, 'gone'] }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(UnknownSkillsError)
    expect((err as UnknownSkillsError).fieldErrors).toEqual({ 'skills.1': expect.any(String), 'skills.2': expect.any(String) })
    expect((err as UnknownSkillsError).fieldErrors!['skills.1']).toBe((err as UnknownSkillsError).fieldErrors!['skills.2'])
  })
})

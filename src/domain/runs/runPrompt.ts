import { systemPromptOf } from '../chat/chatPrompt.ts'

const RUN_PREAMBLE =
  'You are working on your own on the goal below, in steps: call the tools you need, read their results, and when the goal is reached ' +
  '(or cannot be), answer with a short summary and no tool call. Nobody answers questions during a run.'

/** A run's system prompt: the run's preamble, then the chat system prompt (the agent, its owner's instructions, its skills). */
export function runSystemPromptOf(agent: Parameters<typeof systemPromptOf>[0], skills: string): string {
  return [RUN_PREAMBLE, systemPromptOf(agent, skills)].join('\n\n')
}

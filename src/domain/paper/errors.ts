import { ServiceError } from '../errors.ts'

/** 422 `mode_immutable`: an update named `mode`; an agent's mode is fixed at creation (a clone makes a live one). */
export class ModeImmutableError extends ServiceError {
  constructor() {
    const message = "An agent's mode never changes; POST /agents/:id/clone makes a new live agent from its settings."
    super(message, { code: 'mode_immutable', status: 422, fieldErrors: { mode: message } })
  }
}

/** 422 `paper_unsupported`: an operation a paper agent cannot simulate (a fee claim, a market listing). */
export class PaperUnsupportedError extends ServiceError {
  constructor(what: string) {
    super(`A paper agent cannot ${what}: it is not simulated, and nothing a paper agent does reaches the chain.`, { code: 'paper_unsupported', status: 422 })
  }
}

/** 422 `not_paper_agent`: a virtual deposit to a live agent (its funds are real: fund its wallet instead). */
export class NotPaperAgentError extends ServiceError {
  constructor() {
    const message = 'Only a paper agent takes virtual deposits; fund a live agent by sending tokens to its wallet.'
    super(message, { code: 'not_paper_agent', status: 422, fieldErrors: { agentId: message } })
  }
}

/** 422 `paper_token_unsupported`: a swap naming a paper token (a paper launch's virtual token) by anyone but the paper agent that launched it. */
export class PaperTokenSwapUnsupportedError extends ServiceError {
  constructor(field: string) {
    const message = "A paper token (a paper launch's virtual token, 0x0000000000000000a…) exists only in its launcher's paper ledger: only that paper agent trades it, against its virtual pool."
    super(message, { code: 'paper_token_unsupported', status: 422, fieldErrors: { [field]: message } })
  }
}

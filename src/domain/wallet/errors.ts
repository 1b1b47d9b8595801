import { ServiceError } from '../errors.ts'

/** 403 `address_not_whitelisted`: a transfer to an address that is not on the agent's whitelist. */
export class AddressNotWhitelistedError extends ServiceError {
  constructor({ address }: { address: string }) {
    super(`${address} is not on this agent's whitelist.`, { code: 'address_not_whitelisted', status: 403 })
  }
}

/** 403 `address_in_cooldown`: the address is whitelisted but its hold has not passed yet. */
export class AddressInCooldownError extends ServiceError {
  constructor({ address, usableAt }: { address: string; usableAt: string }) {
    super(`${address} was whitelisted recently and is still in its hold period (usable from ${usableAt}).`, {
      code: 'address_in_cooldown',
      status: 403,
    })
  }
}

/** Waits for a condition (checked every 25 ms), failing after `ms`: tests wait on facts, not on fixed sleeps. */
export async function waitFor(check: () => Promise<boolean> | boolean, ms = 5000): Promise<void> {
  const until = Date.now() + ms
  while (Date.now() < until) {
    if (await check()) return
    await new Promise((r) => setTimeout(r, 25))
  }
  throw new Error('condition not met in time')
}

/** A USD decimal string as whole cents (truncated past the cent), for figures checked to the cent. */
export const cents = (usd: string): bigint => {
  const [i, f = ''] = usd.replace('-', '').split('.')
  return (usd.startsWith('-') ? -1n : 1n) * (BigInt(i!) * 100n + BigInt((f + '00').slice(0, 2)))
}

/** Whole cents as a USD decimal string with two places. */
export const usd = (c: bigint): string => {
  const s = (c < 0n ? -c : c).toString().padStart(3, '0')
  return `${c < 0n ? '-' : ''}${s.slice(0, -2)}.${s.slice(-2)}`
}

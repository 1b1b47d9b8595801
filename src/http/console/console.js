// The operator console: one ES module, no framework, no build step. It reads only the ops API
// (/api/v1/ops/...), with the operator's API key (kept in sessionStorage, sent as Bearer) or the
// browser's SIWE session cookie (its CSRF token read from GET /api/v1/auth/session and kept in
// memory only). Text from the API is set as text, never as HTML.

const API = '/api/v1'
const KNOWN_KINDS = ['agent', 'launch', 'walletop', 'chatturn', 'run', 'automation']
const main = document.getElementById('main')
const nav = document.getElementById('nav')
const liveDot = document.getElementById('live')
/** Cleanups of the current view (timers, streams), run when the view changes. */
let cleanups = []
/** The SIWE session's CSRF token (GET /auth/session), sent with every action when no key is used. */
let sessionCsrf = null

// ---------- DOM and formatting helpers ----------

function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag)
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v)
    else if (k === 'text') el.textContent = String(v)
    else el.setAttribute(k, v === true ? '' : String(v))
  }
  for (const c of children.flat()) if (c !== null && c !== undefined && c !== false) el.append(c instanceof Node ? c : String(c))
  return el
}
/** Replaces an element's children, skipping null and false (the conditional parts of a view). */
const put = (el, ...children) => el?.replaceChildren(...children.flat().filter((c) => c !== null && c !== undefined && c !== false))
const badge = (status, testid) => h('span', { class: `badge ${status}`, 'data-testid': testid, text: status })
const when = (iso) => (iso ? new Date(iso).toLocaleString() : '')
const short = (id) => (id && id.length > 14 ? `${id.slice(0, 8)}…${id.slice(-4)}` : id)
const actorLink = (id, text) => h('a', { href: `#/actor/${encodeURIComponent(id)}`, title: id }, text ?? short(id))
const table = (headers, rows, testid) =>
  h('table', { 'data-testid': testid }, h('thead', {}, h('tr', {}, headers.map((x) => h('th', { text: x })))), h('tbody', {}, rows))
const empty = (cols, text) => h('tr', {}, h('td', { colspan: cols, class: 'muted', text }))
/** Bytes as a person reads them (1.2 GB). */
const bytes = (n) => { const u = ['B', 'KB', 'MB', 'GB', 'TB']; let i = 0; let v = Math.abs(n); while (v >= 1000 && i < u.length - 1) { v /= 1000; i++ } return `${n < 0 ? '-' : ''}${v.toFixed(v >= 100 || i === 0 ? 0 : 1)} ${u[i]}` }
const card = (label, n, cls, testid) => h('div', { class: `card ${cls ?? ''}`, 'data-testid': testid }, h('div', { class: 'n', text: n ?? '–' }), h('div', { class: 'l', text: label }))

// ---------- the API ----------

class ApiError extends Error {
  constructor(status, body) {
    super(body?.error ?? `HTTP ${status}`)
    this.status = status
    this.code = body?.code
  }
}

function headers(write) {
  const key = sessionStorage.getItem('opsKey')
  if (key) return { authorization: `Bearer ${key}` }
  return write && sessionCsrf ? { 'x-csrf-token': sessionCsrf } : {}
}

async function api(path, { method = 'GET', body } = {}, retried = false) {
  const res = await fetch(API + path, {
    method,
    credentials: 'same-origin',
    headers: { ...headers(method !== 'GET'), ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  })
  const json = await res.json().catch(() => null)
  // A session signed in again in another tab has a new CSRF token: read it and try once more.
  if (res.status === 403 && json?.code === 'csrf_token_invalid' && !retried && (await loadSession())?.signedIn) return api(path, { method, body }, true)
  if (!res.ok) throw new ApiError(res.status, json)
  return json
}

/**
 * Reads the browser's SIWE session (GET /auth/session/state, 200 signed in or not: a page that
 * was asked nothing logs no failed request): its CSRF token. Answers the state, null when unreachable.
 */
async function loadSession() {
  sessionCsrf = null
  const res = await fetch(`${API}/auth/session/state`, { credentials: 'same-origin' }).catch(() => null)
  const state = res?.ok ? await res.json() : null
  if (state?.signedIn) sessionCsrf = state.csrfToken
  return state
}

/** Follows a Server-Sent Events route with fetch (EventSource cannot send a bearer key); resumes with Last-Event-ID. */
function follow(path, onEvent) {
  const controller = new AbortController()
  let lastId = null
  let stopped = false
  const run = async () => {
    while (!stopped) {
      try {
        const res = await fetch(API + path, { headers: { ...headers(false), accept: 'text/event-stream', ...(lastId ? { 'last-event-id': lastId } : {}) }, signal: controller.signal, credentials: 'same-origin' })
        if (!res.ok || !res.body) return
        const reader = res.body.getReader()
        const decoder = new TextDecoder()
        let buffer = ''
        for (;;) {
          const { value, done } = await reader.read()
          if (done) return // the stream closed after a final state
          buffer += decoder.decode(value, { stream: true })
          let cut
          while ((cut = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, cut)
            buffer = buffer.slice(cut + 2)
            const id = /^id: (.*)$/m.exec(block)
            const data = /^data: (.*)$/m.exec(block)
            if (id) lastId = id[1]
            if (data) onEvent(JSON.parse(data[1]))
          }
        }
      } catch {
        if (stopped) return
        await new Promise((r) => setTimeout(r, 1000))
      }
    }
  }
  void run()
  return () => {
    stopped = true
    controller.abort()
  }
}

/** Runs `fn` now and every `ms` while the view is shown; the dot turns red when a refresh fails. */
function every(ms, fn) {
  let timer
  let stopped = false
  const tick = async () => {
    try {
      await fn()
      liveDot.classList.remove('stale')
    } catch (err) {
      liveDot.classList.add('stale')
      if (!stopped && err instanceof ApiError && (err.status === 401 || err.status === 403)) return showSignIn(err)
    }
    // A refresh still in flight when the view changed must not start another.
    if (!stopped) timer = setTimeout(tick, ms)
  }
  void tick()
  cleanups.push(() => {
    stopped = true
    clearTimeout(timer)
  })
}

/** A button that asks for a reason, then posts the action; every console action is audited with it. */
function action(label, path, done, { danger = false, testid, confirm, note } = {}) {
  const wrap = h('span', { class: 'reason' })
  const open = h('button', { type: 'button', class: danger ? 'danger' : '', 'data-testid': testid, text: label, onclick: () => {
    const input = h('input', { name: 'reason', required: true, minlength: 3, placeholder: 'Reason (audited)', 'data-testid': 'reason' })
    const error = h('span', { class: 'error' })
    const form = h('form', { class: 'reason', onsubmit: async (e) => {
      e.preventDefault()
      try {
        await api(path, { method: 'POST', body: { reason: input.value } })
        await done()
      } catch (err) {
        error.textContent = err.message
      }
    } }, note ? h('div', { class: 'muted', 'data-testid': 'confirm-note', text: note }) : null, input,
      h('button', { type: 'submit', 'data-testid': 'confirm', text: confirm ?? `Confirm ${label.toLowerCase()}` }), error)
    put(wrap, form)
    input.focus()
  } })
  wrap.append(open)
  return wrap
}

// ---------- sign-in ----------

function showSignIn(err) {
  for (const c of cleanups) c()
  cleanups = []
  // A refused key is forgotten: the next view asks for one instead of failing with it again.
  if (err?.status === 401 || err?.status === 403) sessionStorage.removeItem('opsKey')
  nav.hidden = true
  const key = h('input', { type: 'password', name: 'key', placeholder: 'cpk_…', autocomplete: 'off', 'data-testid': 'api-key' })
  const message = err
    ? err.status === 403
      ? 'This account is not an operator account (403). The console is for operators only.'
      : err.status === 401 && err.code === 'no_session'
        ? 'No Sign-In with Ethereum session in this browser (401): sign in with your wallet first, or use an API key.'
        : 'Sign in with an operator API key (401).'
    : ''
  put(main, 
    h('div', { class: 'signin' },
      h('h1', { text: 'Sign in' }),
      h('p', { class: 'muted', text: 'An API key of an operator account (kept in this tab only), or the Sign-In with Ethereum session of an operator account in this browser.' }),
      message && h('p', { class: 'error', 'data-testid': 'signin-error', text: message }),
      h('form', { onsubmit: (e) => {
        e.preventDefault()
        sessionStorage.setItem('opsKey', key.value.trim())
        route()
      } }, h('label', { text: 'Operator API key' }), key, h('button', { type: 'submit', 'data-testid': 'signin', text: 'Sign in' })),
      h('form', { onsubmit: async (e) => {
        e.preventDefault()
        sessionStorage.removeItem('opsKey')
        if ((await loadSession())?.signedIn) route()
        else showSignIn(new ApiError(401, { code: 'no_session' }))
      } }, h('label', { text: 'Or use this browser’s Sign-In with Ethereum session' }), h('button', { type: 'submit', 'data-testid': 'use-session', text: 'Use session' })),
    ),
  )
}

// ---------- views ----------

async function overview() {
  put(main, h('h1', { text: 'Overview' }), h('div', { id: 'ov' }))
  every(2000, async () => {
    const o = await api('/ops/overview')
    const kinds = [...new Set([...KNOWN_KINDS, ...o.actors.map((a) => a.kind)])]
    const states = (k) => o.actors.filter((a) => a.kind === k)
    const work = (k) => o.work.find((w) => w.kind === k)
    put(document.getElementById('ov'), 
      h('div', { class: 'cards' },
        card('effects pending', o.effects.pending, '', 'effects-pending'),
        card('effects retrying', o.effects.retrying, o.effects.retrying ? 'warn' : ''),
        card('effects failed', o.effects.failed, o.effects.failed ? 'bad' : ''),
        card('dead letters', o.deadLetters, o.deadLetters ? 'bad' : '', 'dead-letters'),
        card('stuck actors', o.stuck, o.stuck ? 'bad' : ''),
        card('model credits / hour', o.modelCreditsLastHour),
        card('credits reserved', o.creditsReserved),
        card('transactions / min', o.transactions.lastMinute),
        card('automation firings / min', work('firing')?.lastMinute ?? 0, '', 'firings'),
        card('chain head', o.chain.head),
        card('indexer lag (blocks)', o.chain.lagBlocks, o.chain.lagBlocks > 5 ? 'warn' : ''),
        card('database size', bytes(o.storage.databaseBytes), '', 'database-size'),
        card('growth last hour', o.storage.growthLastHourBytes === null ? 'n/a' : bytes(o.storage.growthLastHourBytes), '', 'database-growth'),
        card('compaction backlog', o.storage.compactionBacklog, o.storage.compactionBacklog > 10000 ? 'warn' : '', 'compaction-backlog'),
      ),
      h('h2', { text: 'Actors per kind and state' }),
      table(['kind', 'states', 'started last minute', 'last hour'], kinds.map((k) => h('tr', { 'data-testid': `kind-${k}` },
        h('td', {}, h('a', { href: `#/actors?kind=${k}`, text: k })),
        h('td', {}, states(k).length
          ? states(k).map((s) => h('a', { href: `#/actors?kind=${k}&status=${s.status}`, class: 'mono' }, badge(s.status), ` ${s.count}  `))
          : h('span', { class: 'muted', text: 'none' })),
        h('td', { text: work(k)?.lastMinute ?? 0 }),
        h('td', { text: work(k)?.lastHour ?? 0 }),
      )), 'overview-kinds'),
      h('p', { class: 'muted', text: `Updated ${when(o.at)}` }),
    )
  })
}

function filterForm(q) {
  const field = (name, label, attrs = {}) => h('label', {}, label, h('input', { name, value: q.get(name) ?? '', ...attrs }))
  const go = (params) => (location.hash = `#/actors?${new URLSearchParams([...params].filter(([, v]) => v))}`)
  const form = h('form', { class: 'filters', onsubmit: (e) => {
    e.preventDefault()
    const data = new FormData(form)
    for (const k of ['since', 'until']) if (data.get(k)) data.set(k, new Date(String(data.get(k))).toISOString())
    go(data)
  } },
    h('label', {}, 'kind', h('select', { name: 'kind' }, h('option', { value: '', text: 'any' }), KNOWN_KINDS.map((k) => h('option', { value: k, selected: q.get('kind') === k, text: k })))),
    field('status', 'state', { size: 12, 'data-testid': 'filter-status' }),
    field('accountId', 'account', { size: 36 }),
    field('agentId', 'agent', { size: 36 }),
    field('since', 'created since', { type: 'datetime-local', value: q.get('since')?.slice(0, 16) ?? '' }),
    field('until', 'until', { type: 'datetime-local', value: q.get('until')?.slice(0, 16) ?? '' }),
    field('q', 'id, tx hash or address', { size: 30 }),
    // Each kind's failure states (launches, operations, turns: failed; runs: failed, budget_exhausted; automations: error).
    h('label', { title: 'launch, walletop, chatturn: failed · run: failed, budget_exhausted · automation: error' }, h('input', { type: 'checkbox', name: 'failed', value: 'true', checked: q.get('failed') === 'true' }), ' failed only'),
    h('button', { type: 'submit', text: 'Apply' }),
    h('button', { type: 'button', 'data-testid': 'failed-only', text: 'Failed only', onclick: () => { q.delete('status'); q.delete('cursor'); q.set('failed', 'true'); go(q) } }),
    h('button', { type: 'button', text: 'Stuck only', onclick: () => { q.delete('failed'); q.delete('cursor'); q.set('status', 'stuck'); go(q) } }),
    h('button', { type: 'button', text: 'Clear', onclick: () => go(new URLSearchParams()) }),
  )
  return form
}

async function actors(q) {
  const body = h('div')
  put(main, h('h1', { text: 'Actors' }), filterForm(q), body)
  every(2000, async () => {
    const list = await api(`/ops/actors?${q}`)
    put(body, 
      table(['id', 'kind', 'state', 'account', 'created', 'updated'], list.actors.length
        ? list.actors.map((a) => h('tr', { 'data-testid': 'actor-row', 'data-id': a.id, 'data-status': a.status },
            h('td', { class: 'mono' }, actorLink(a.id, a.id)), h('td', { text: a.kind }),
            h('td', {}, badge(a.status), a.stuckReason ? badge('stuck') : null),
            h('td', { class: 'mono' }, h('a', { href: `#/actors?accountId=${a.accountId}`, text: short(a.accountId) })),
            h('td', { text: when(a.createdAt) }), h('td', { text: when(a.updatedAt) })))
        : [empty(6, 'No actor matches.')], 'actor-list'),
      list.nextCursor ? h('p', {}, h('a', { href: `#/actors?${new URLSearchParams({ ...Object.fromEntries(q), cursor: list.nextCursor })}`, text: 'Next page →' })) : null,
    )
  })
}

/** An effect's attempts in words: "attempt 3 of 8 failed", the error, the next try, or how it ended. */
function effectDetail(e) {
  const of = e.maxAttempts === null ? ' (retries until it lands)' : ` of ${e.maxAttempts}`
  const parts = [h('span', { class: 'mono', text: e.kind }), ' ', badge(e.status)]
  if (e.endedAt) parts.push(` after ${e.attemptsMade} attempt${e.attemptsMade === 1 ? '' : 's'}${of} · ended ${when(e.endedAt)} · ${e.durationMs} ms from creation`)
  else if (e.inFlight) parts.push(` attempt ${e.attemptsMade + 1}${of} running`)
  else if (e.attemptsMade > 0) parts.push(` attempt ${e.attemptsMade}${of} failed ${when(e.lastAttemptAt)} · next try ${when(e.nextAttemptAt)}`)
  else parts.push(` waiting for its first attempt (${when(e.nextAttemptAt)})`)
  if (e.lastError) parts.push(h('div', { class: 'error', 'data-testid': 'effect-error', text: `last error: ${e.lastError}` }))
  if (e.failedAttempts?.length) {
    parts.push(h('details', { 'data-testid': 'effect-attempts' }, h('summary', { text: `${e.failedAttempts.length} failed attempt${e.failedAttempts.length === 1 ? '' : 's'} retried` }),
      h('ol', {}, e.failedAttempts.map((a) => h('li', { value: a.attempt, text: `${when(a.endedAt)}: ${a.error}` })))))
  }
  return parts
}

function timelineRow(e) {
  const detail = {
    event: () => [h('span', { class: 'mono', text: e.event }), ' → ', badge(typeof e.state === 'string' ? e.state : JSON.stringify(e.state))],
    effect: () => effectDetail(e),
    timer: () => e.fired
      ? [h('span', { class: 'mono', text: e.key }), ` fired ${when(e.firedAt)}`, e.dueAt ? ` (due ${when(e.dueAt)})` : ' (due time not recorded)']
      : [h('span', { class: 'mono', text: e.key }), ` pending, due ${when(e.dueAt)}`],
    child: () => [actorLink(e.id), ` ${e.kind} `, badge(e.status)],
    dead_letter: () => [h('span', { class: 'mono', text: e.eventType ?? '(no type)' }), ' ', badge(e.resolution ?? 'open'), h('div', { class: 'error', text: e.error })],
  }[e.type]
  return h('tr', { 'data-testid': `timeline-${e.type}` }, h('td', { text: when(e.at) }), h('td', { text: e.type }), h('td', {}, detail ? detail() : '', traceTag(e.traceId)))
}

/** The trace an entry belongs to, to look up in the collector's UI (null: tracing was off). */
const traceTag = (traceId) => (traceId ? h('div', { class: 'mono muted', 'data-testid': 'trace-id', title: 'trace id', text: `trace ${traceId}` }) : null)
/** The traces of the entries shown, each once, oldest first. */
const tracesOf = (timeline) => [...new Set(timeline.map((e) => e.traceId).filter(Boolean))]

/** A timeline entry's identity across pages and refreshes (an effect's status changes, its key does not). */
const entryKey = (e) => ({ event: `e${e.seq}`, effect: `f${e.id}`, timer: e.fired ? `t${e.seq}` : `p${e.key}`, child: `c${e.id}`, dead_letter: `d${e.seq}` })[e.type] ?? JSON.stringify(e)

/** A mined transaction's fee in ETH (gas used × the price it paid), from wei. */
const feeEth = (wei) => (wei ? `${(Number(BigInt(wei) / 10n ** 9n) / 1e9).toFixed(9)} ETH` : '')

function transactionsTable(txs) {
  const rowId = (id) => `tx-${id.replace(/[^A-Za-z0-9_-]/g, '_')}`
  // Replaced-by links move to the replacement's row on this page (the page's own # routes views).
  const jump = (id) => (ev) => {
    ev.preventDefault()
    const row = document.getElementById(rowId(id))
    row?.scrollIntoView({ block: 'center' })
    row?.classList.add('flash')
  }
  return table(['nonce', 'hash', 'status', 'gas used', 'price paid (wei/gas)', 'fee', 'max fee', 'block', 'replaced by'], txs.map((x) => h('tr', { 'data-testid': 'tx-row', id: rowId(x.id) },
    h('td', { text: x.nonce }), h('td', { class: 'mono', text: x.hash }), h('td', {}, badge(x.status)), h('td', { text: x.gasUsed ?? '' }),
    h('td', { text: x.effectiveGasPrice ?? '' }), h('td', { 'data-testid': 'tx-fee', text: feeEth(x.feeWei) }), h('td', { text: x.maxFeePerGas }),
    h('td', { text: x.blockNumber ?? '' }),
    h('td', { class: 'mono' }, x.replacedBy ? h('a', { href: '#', 'data-testid': 'replaced-by', title: x.replacedBy, onclick: jump(x.replacedBy), text: short(x.replacedByHash ?? x.replacedBy) }) : ''))), 'transactions')
}

async function actorView(id) {
  const head = h('div')
  const body = h('div')
  put(main, head, body)
  // Every timeline entry seen, newest page refreshed live, older pages added by "Load older".
  const entries = new Map()
  let older // the cursor of the next older page: undefined before the first answer, null when none is left
  const merge = (list) => list.forEach((e) => entries.set(entryKey(e), e))
  const loadOlder = async () => {
    const page = await api(`/ops/actors/${encodeURIComponent(id)}/timeline?cursor=${encodeURIComponent(older)}`)
    merge(page.timeline)
    older = page.nextCursor
    await render()
  }
  const render = async () => {
    const t = await api(`/ops/actors/${encodeURIComponent(id)}/timeline`)
    for (const [k, e] of entries) if (e.type === 'timer' && !e.fired) entries.delete(k)
    merge(t.timeline)
    if (older === undefined) older = t.nextCursor
    const timeline = [...entries.values()].sort((x, y) => x.at.localeCompare(y.at))
    const a = t.actor
    const audit = await api(`/ops/audit?subjectId=${encodeURIComponent(a.id)}&limit=20`).catch(() => ({ entries: [] }))
    const refresh = () => render()
    put(head, 
      h('h1', {}, `${a.kind} `, h('span', { class: 'mono', text: a.id }), ' ', badge(a.status, 'actor-status'), a.stuckReason ? badge('stuck') : null),
      h('p', { class: 'muted' }, `account `, h('a', { href: `#/actors?accountId=${a.accountId}`, class: 'mono', text: a.accountId }), ` · version ${a.version} · created ${when(a.createdAt)} · updated ${when(a.updatedAt)}`),
      t.parent ? h('p', {}, 'parent: ', actorLink(t.parent.id), ` ${t.parent.kind} `, badge(t.parent.status)) : null,
      tracesOf(timeline).length ? h('p', { 'data-testid': 'actor-traces' }, 'traces: ', ...tracesOf(timeline).flatMap((id, i) => [i ? ' · ' : '', h('span', { class: 'mono', text: id })])) : null,
      a.kind === 'agent' ? h('p', {}, h('a', { href: `#/agent/${a.id}`, 'data-testid': 'agent-card-link', text: 'Agent card →' })) : null,
      a.stuckReason ? h('p', { class: 'error' }, `Stuck: ${a.stuckReason} `, action('Unstick', `/ops/actors/${encodeURIComponent(a.id)}/unstick`, refresh)) : null,
      a.kind === 'run' && ['queued', 'running'].includes(a.status) ? action('Cancel run', `/ops/runs/${a.id}/cancel`, refresh, { danger: true, testid: 'cancel-run' }) : null,
    )
    put(body, 
      t.children.length ? h('div', {}, h('h2', { text: 'Children' }), table(['id', 'kind', 'outcome'], t.children.map((c) => h('tr', {}, h('td', { class: 'mono' }, actorLink(c.id)), h('td', { text: c.kind }), h('td', {}, badge(c.status)))))) : null,
      t.namingAgent?.length ? h('div', {}, h('h2', { text: 'What this agent did (operations, launches, turns, runs, automations)' }), table(['id', 'kind', 'state', 'started by', 'created'], t.namingAgent.map((c) => h('tr', { 'data-testid': 'naming-agent-row', 'data-id': c.id },
        h('td', { class: 'mono' }, actorLink(c.id)), h('td', { text: c.kind }), h('td', {}, badge(c.status)), h('td', { class: 'mono' }, c.parentId ? actorLink(c.parentId) : h('span', { class: 'muted', text: 'owner request' })), h('td', { text: when(c.createdAt) }))), 'naming-agent')) : null,
      t.deadLetters.length ? h('div', {}, h('h2', { text: 'Dead letters' }), deadLetterTable(t.deadLetters.map((d) => ({ ...d, actorId: a.id, kind: a.kind })), refresh)) : null,
      t.transactions.length ? h('div', {}, h('h2', { text: 'Transactions' }), transactionsTable(t.transactions)) : null,
      h('h2', { text: 'Timeline' }),
      older ? h('p', {}, h('button', { type: 'button', 'data-testid': 'load-older', text: 'Load older', onclick: () => void loadOlder().catch(() => {}) })) : h('p', { class: 'muted', 'data-testid': 'timeline-start', text: 'From the start.' }),
      table(['at', 'type', 'detail'], timeline.map(timelineRow), 'timeline'),
      h('h2', { text: 'Audit' }),
      auditTable(audit.entries),
      h('h2', { text: 'Snapshot' }),
      h('pre', { text: JSON.stringify(a.snapshot, null, 2) }),
    )
  }
  await render()
  // Live: the actor's own event stream (the same mechanism clients use), plus a slow refresh for effects and timers.
  let pending = false
  cleanups.push(follow(`/ops/actors/${encodeURIComponent(id)}/events`, () => {
    if (pending) return
    pending = true
    setTimeout(() => { pending = false; void render().catch(() => {}) }, 50)
  }))
  every(5000, render)
}

function auditTable(entries) {
  return table(['at', 'action', 'by', 'reason / after'], entries.length
    ? entries.map((e) => h('tr', { 'data-testid': 'audit-row' },
        h('td', { text: when(e.at) }), h('td', { class: 'mono', text: e.action }),
        h('td', { class: 'mono', text: e.actor ? (e.actor.type === 'operator' ? `operator ${short(e.actor.accountId)}` : e.actor.type === 'key' ? `key ${short(e.actor.keyId)}` : `session ${e.actor.address}`) : '' }),
        h('td', { class: 'mono', text: e.after?.reason ?? JSON.stringify(e.after) })))
    : [empty(4, 'Nothing audited.')], 'audit-table')
}

/** Retry sends the dead letter's event again: the confirmation names it and the actor it goes to. */
function retryAction(d, refresh) {
  const type = d.eventType ?? '(an event with no type)'
  return action('Retry', `/ops/dead-letters/${d.seq}/retry`, refresh, {
    testid: 'retry', confirm: `Confirm: send ${type} again`,
    note: `Sends ${type} to ${d.kind} ${d.actorId} again. It goes through the actor's machine like any event; what it starts runs the same checks (an event that would start a launch's transaction is refused).`,
  })
}

function deadLetterTable(rows, refresh) {
  return table(['seq', 'actor', 'event type', 'event', 'error', 'dead at', ''], rows.length
    ? rows.map((d) => h('tr', { 'data-testid': 'dead-letter-row', 'data-seq': d.seq },
        h('td', { text: d.seq }), h('td', { class: 'mono' }, actorLink(d.actorId), ` ${d.kind}`),
        h('td', { class: 'mono', 'data-testid': 'dead-letter-type', text: d.eventType ?? '(none)' }), h('td', { class: 'mono', text: JSON.stringify(d.event) }),
        h('td', { class: 'error', text: d.error }), h('td', { text: when(d.deadAt) }),
        h('td', {}, d.resolution ? badge(d.resolution) : [retryAction(d, refresh), ' ', action('Discard', `/ops/dead-letters/${d.seq}/discard`, refresh, { danger: true, testid: 'discard' })])))
    : [empty(7, 'No dead letter.')], 'dead-letters-table')
}

async function deadLetters() {
  const body = h('div')
  put(main, h('h1', { text: 'Dead letters and stuck actors' }), body)
  const render = async () => {
    const [dl, stuck, audit] = await Promise.all([api('/ops/dead-letters?limit=100'), api('/ops/actors?status=stuck&limit=100'), api('/ops/audit?limit=50')])
    put(body, 
      h('h2', { text: 'Dead letters' }), deadLetterTable(dl.deadLetters, render),
      h('h2', { text: 'Stuck actors' }),
      table(['id', 'kind', 'state', 'why', ''], stuck.actors.length
        ? stuck.actors.map((a) => h('tr', {}, h('td', { class: 'mono' }, actorLink(a.id, a.id)), h('td', { text: a.kind }), h('td', {}, badge(a.status)), h('td', { class: 'error', text: a.stuckReason }),
            h('td', {}, action('Unstick', `/ops/actors/${encodeURIComponent(a.id)}/unstick`, render))))
        : [empty(5, 'No stuck actor.')]),
      h('h2', { text: 'Console actions (audit trail)' }),
      auditTable(audit.entries.filter((e) => e.action.startsWith('ops.'))),
    )
  }
  every(3000, render)
}

async function agentView(id) {
  const body = h('div')
  // The newest page is refreshed; older pages, once asked for with "Load older", are kept as read.
  const operations = h('div', { 'data-testid': 'operations' }, h('p', { class: 'muted', text: 'Reading the operations…' }))
  let newest = []
  let older = []
  let olderCursor
  const showOperations = () => put(operations, operationsTable([...newest, ...older.filter((o) => !newest.some((n) => n.id === o.id))]),
    olderCursor ? h('p', {}, h('button', { type: 'button', 'data-testid': 'operations-older', text: 'Load older', onclick: () => void loadOlderOperations().catch(() => {}) })) : null)
  const refreshOperations = async () => {
    const page = await api(`/ops/agents/${id}/operations?limit=20`)
    newest = page.operations
    if (olderCursor === undefined) olderCursor = page.nextCursor
    showOperations()
  }
  const loadOlderOperations = async () => {
    const page = await api(`/ops/agents/${id}/operations?limit=20&cursor=${encodeURIComponent(olderCursor)}`)
    older = [...older, ...page.operations]
    olderCursor = page.nextCursor
    showOperations()
  }
  // The value chart is read on chain at past blocks: once on open, then every minute.
  const history = h('div', { 'data-testid': 'value-chart' }, h('p', { class: 'muted', text: 'Reading the value history…' }))
  put(main, body)
  every(60_000, async () => {
    const { points } = await api(`/ops/agents/${id}/value-history`)
    put(history, chart(points.map((p) => ({ t: Date.parse(p.at), v: Number(p.totalValueUsd ?? 0), block: p.blockNumber }))))
  })
  const render = async () => {
    const c = await api(`/ops/agents/${id}`)
    const a = c.agent
    const cap = (label, limit, used) => h('tr', {}, h('td', { text: label }), h('td', { text: limit ?? 'none' }), h('td', { text: used ?? '' }))
    const actorsTable = (list, testid, next = 'next timer') => table(['id', 'state', 'created', next], list.length
      ? list.map((r) => h('tr', {}, h('td', { class: 'mono' }, actorLink(r.id)), h('td', {}, badge(r.status)), h('td', { text: when(r.createdAt) }), h('td', { text: when(r.nextTimerAt) })))
      : [empty(4, 'None.')], testid)
    put(body, 
      h('h1', {}, `agent ${a.name} `, badge(a.status, 'agent-status'), a.policy.paused ? badge('paused') : null, a.mode === 'paper' ? badge('paper', 'agent-mode') : null),
      h('p', { class: 'muted' }, h('span', { class: 'mono', text: a.id }), ' · wallet ', h('span', { class: 'mono', text: a.walletAddress }), ' · account ', h('a', { href: `#/actors?accountId=${c.accountId}`, class: 'mono', text: c.accountId })),
      h('p', {}, c.flags.lowBalance ? h('span', { class: 'flag', 'data-testid': 'flag-low-balance', text: 'LOW BALANCE' }) : null, c.flags.lowCredits ? h('span', { class: 'flag', 'data-testid': 'flag-low-credits', text: 'LOW CREDITS' }) : null),
      a.policy.paused ? h('p', { class: 'muted', text: 'Kill switch on: every fund-moving request is refused. Only the owner can unpause, after the hold.' }) : action('Pause agent (kill switch)', `/ops/agents/${id}/pause`, render, { danger: true, testid: 'pause-agent' }),
      h('div', { class: 'row' },
        h('div', {}, h('h2', { text: 'Balances (USD)' }), c.portfolio
          ? table(['token', 'balance', 'value USD'], [...c.portfolio.holdings.map((x) => h('tr', {}, h('td', { text: x.symbol }), h('td', { text: x.balance }), h('td', { text: x.valueUsd ?? '?' }))), h('tr', {}, h('td', { text: 'total' }), h('td'), h('td', { 'data-testid': 'portfolio-total', text: c.portfolio.totalValueUsd }))])
          : h('p', { class: 'muted', text: 'No chain: balances unknown.' }),
          h('h2', { text: 'Portfolio value over time (USD, on chain)' }), history),
        h('div', {}, h('h2', { text: 'Policy caps against today' }), table(['rule', 'cap', 'used today'], [
          cap('per trade USD', a.policy.maxTradeUsd), cap('per day USD', a.policy.maxDailyUsd, c.spentTodayUsd), cap('price impact bps', a.policy.maxPriceImpactBps),
        ]), h('p', { class: 'muted', text: `Credits: ${c.credits.credits} (held ${c.credits.reserved})` }),
        h('h2', { text: 'Pending guardrail changes' }), pendingTable(a.pendingChanges)),
      ),
      h('h2', { text: 'Effective owner policy (account rules first; reject wins, then require_approval, then accept; no match: the guardrails)' }), policyTable(c.policies),
      h('div', { class: 'row' },
        h('div', {}, h('h2', { text: 'Runs' }), actorsTable(c.runs, 'runs')),
        h('div', {}, h('h2', { text: 'Chat turns' }), actorsTable(c.chatTurns, 'turns')),
        h('div', {}, h('h2', { text: 'Automations' }), c.automations.length ? actorsTable(c.automations, 'automations', 'next firing') : h('p', { class: 'muted', text: 'No automation for this agent.' })),
      ),
      h('h2', { text: 'Wallet operations and launches' }), operations,
      h('h2', { text: 'Audit trail' }), auditTable(c.audit),
    )
  }
  every(5000, render)
  every(5000, refreshOperations)
}

/** An owner's criterion as a person reads it. */
function criterionText(c) {
  const list = (xs) => xs.join(', ')
  switch (c.type) {
    case 'operation': return `operation: ${list(c.operations)}`
    case 'initiator': return `started by: ${list(c.initiators)}`
    case 'token': return `token ${c.side}: ${list(c.tokens)}`
    case 'destination': return `to: ${list(c.addresses)}`
    case 'usd_value': return `USD ${c.operator} ${c.usd}`
    case 'net_usd_window': return `net USD of the ${c.scope} over ${c.windowSeconds} s ${c.operator} ${c.usd}`
    case 'price_impact': return `impact ${c.operator} ${c.bps} bps`
    case 'time_of_day': return `${c.fromUtc}-${c.toUtc} UTC`
    default: return c.type
  }
}

/** The account's and the agent's policies as they apply to this agent, in evaluation order, and any loosening still held. */
function policyTable(policies) {
  const rows = ['account', 'agent'].flatMap((scope) => policies[scope].rules.map((r) =>
    h('tr', { 'data-testid': 'policy-rule', 'data-scope': scope }, h('td', { text: scope }), h('td', { text: r.name }), h('td', {}, badge(r.action)),
      h('td', { text: r.criteria.length ? r.criteria.map(criterionText).join(' and ') : 'every operation' }))))
  const held = ['account', 'agent'].filter((scope) => policies[scope].pending).map((scope) =>
    h('p', { class: 'muted', 'data-testid': 'policy-pending', text: `The ${scope} policy changes to ${policies[scope].pending.rules.length} rule(s) at ${when(policies[scope].pending.effectiveAt)} (a loosening on hold).` }))
  return h('div', {}, table(['scope', 'rule', 'action', 'matches when'], rows.length ? rows : [empty(4, 'No rule: the guardrails decide every move.')], 'policy-rules'), ...held)
}

/** Guardrail changes waiting for their hold: one row per field, with when it takes effect. */
function pendingTable(pending) {
  const rows = pending.flatMap((p) => Object.entries(p.changes).map(([field, value]) =>
    h('tr', { 'data-testid': 'pending-change' }, h('td', { class: 'mono', text: field }), h('td', { class: 'mono', text: value === null ? 'none' : String(value) }), h('td', { text: when(p.effectiveAt) }))))
  return table(['field', 'new value', 'takes effect'], rows.length ? rows : [empty(3, 'None.')], 'pending-changes')
}

/** "0.01 ETH → 29.84 USDC": an operation's amounts as a person reads them. */
function amountText(a) {
  const one = (x) => (x ? `${x.amount} ${x.symbol ?? short(x.token)}${x.symbol ? '' : ' (base units)'}` : '')
  return a.in && a.out ? `${one(a.in)} → ${one(a.out)}` : one(a.in ?? a.out)
}

function operationsTable(list) {
  return table(['created', 'kind', 'state', 'amounts', 'USD', 'tx hash', 'started by', 'operation'], list.length
    ? list.map((o) => h('tr', { 'data-testid': 'operation-row', 'data-id': o.id, 'data-kind': o.kind },
        h('td', { text: when(o.createdAt) }), h('td', { text: o.kind }), h('td', {}, badge(o.status)),
        h('td', { 'data-testid': 'operation-amounts', text: o.kind === 'launch' ? `${o.params.symbol} (${o.params.quote})${o.amounts.out ? `, seed ${amountText(o.amounts)}` : ''}` : amountText(o.amounts) }),
        h('td', { text: o.usdValue ?? '' }), h('td', { class: 'mono', title: o.txHash ?? '', text: o.txHash ? short(o.txHash) : '' }),
        h('td', { 'data-testid': 'operation-started-by' }, o.startedBy ? [`${o.startedBy.kind} `, actorLink(o.startedBy.id)] : h('span', { class: 'muted', text: 'owner request' })),
        h('td', { class: 'mono' }, actorLink(o.id))))
    : [empty(8, 'No operation yet.')], 'operations-table')
}

/** An SVG element with attributes (the page's own h() makes HTML elements). */
function svgEl(tag, attrs = {}, text) {
  const el = document.createElementNS('http://www.w3.org/2000/svg', tag)
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v))
  if (text !== undefined) el.textContent = text
  return el
}

/** The portfolio's value over time: a line with a USD axis (low, middle, high) and a block axis (first, middle, last). */
function chart(samples) {
  const [w, hgt, left, bottom, top, right] = [520, 180, 78, 36, 10, 16]
  if (samples.length < 2) return h('p', { class: 'muted', text: samples.length ? `$${samples[0].v.toFixed(2)} (no history before this block)` : 'No history.' })
  const vs = samples.map((s) => s.v)
  const [lo, hi] = [Math.min(...vs), Math.max(...vs)]
  const t0 = samples[0].t
  const span = samples.at(-1).t - t0 || 1
  const x = (t) => left + ((t - t0) / span) * (w - left - right)
  const y = (v) => hgt - bottom - ((v - lo) / (hi - lo || 1)) * (hgt - bottom - top)
  const svg = svgEl('svg', { class: 'chart', width: w, height: hgt, role: 'img', 'aria-label': 'Portfolio value in USD by block' })
  svg.append(svgEl('line', { class: 'axis', x1: left, y1: top, x2: left, y2: hgt - bottom }), svgEl('line', { class: 'axis', x1: left, y1: hgt - bottom, x2: w - right, y2: hgt - bottom }))
  for (const v of [...new Set([lo, (lo + hi) / 2, hi])]) {
    svg.append(svgEl('line', { class: 'grid', x1: left, y1: y(v), x2: w - right, y2: y(v) }),
      svgEl('text', { class: 'tick', 'data-testid': 'chart-y-label', x: left - 6, y: y(v) + 4, 'text-anchor': 'end' }, `$${v.toFixed(2)}`))
  }
  const mid = samples[Math.floor(samples.length / 2)]
  // The middle label only where it does not run into the first or the last.
  const ends = [x(samples[0].t), x(samples.at(-1).t)]
  const ticks = [[samples[0], 'start'], ...(ends.every((e) => Math.abs(x(mid.t) - e) > 80) ? [[mid, 'middle']] : []), [samples.at(-1), 'end']]
  for (const [s, anchor] of ticks) {
    svg.append(svgEl('text', { class: 'tick', 'data-testid': 'chart-x-label', x: x(s.t), y: hgt - bottom + 16, 'text-anchor': anchor }, `block ${s.block}`))
  }
  svg.append(svgEl('text', { class: 'axis-title', x: 12, y: top + (hgt - bottom - top) / 2, transform: `rotate(-90 12 ${top + (hgt - bottom - top) / 2})`, 'text-anchor': 'middle' }, 'value (USD)'),
    svgEl('text', { class: 'axis-title', x: left + (w - left - right) / 2, y: hgt - 4, 'text-anchor': 'middle' }, 'block (time →)'))
  svg.append(svgEl('polyline', { points: samples.map((s) => `${x(s.t)},${y(s.v)}`).join(' ') }))
  for (const s of samples) svg.append(svgEl('circle', { cx: x(s.t), cy: y(s.v), r: 2.5 }, undefined))
  const [first, last] = [samples[0], samples.at(-1)]
  return h('div', {}, svg, h('p', { class: 'muted', text: `$${first.v.toFixed(2)} at block ${first.block} (${when(new Date(first.t).toISOString())}) → $${last.v.toFixed(2)} at block ${last.block} (${when(new Date(last.t).toISOString())}); low $${lo.toFixed(2)}, high $${hi.toFixed(2)}` }))
}

// ---------- approvals (the signed-in account's own) ----------

/** What a waiting move does, in a few words (a swap's amounts, a transfer's recipient, a launch's seed). */
function approvalWhat(o) {
  if (o.kind === 'swap') return `${o.amountIn} ${o.tokenIn} → ${o.tokenOut}`
  if (o.kind === 'transfer') return `${o.token} → ${o.to}`
  if (o.kind === 'launch') return `${o.venue} ${o.symbol}, seed ${o.seedAmount ?? 0} ${o.quote}`
  return ''
}

/**
 * The signed-in account's approvals (GET /approvals, newest first, one page at a time): the
 * pending ones with Approve and Reject, which post to /approvals/:id/approve|reject with a
 * reason, as the API does. Other accounts' approvals are theirs to decide: not shown. Refreshed
 * every 5 s, except while a reason is being typed.
 */
function approvalsView(q) {
  const status = ['pending', 'approved', 'rejected'].includes(q.get('status')) ? q.get('status') : 'pending'
  const cursor = q.get('cursor')
  const body = h('div', {})
  const tabs = ['pending', 'approved', 'rejected'].map((s) => h('a', { href: `#/approvals?status=${s}`, class: s === status ? 'current' : '', text: s }))
  put(main, h('h1', { text: 'Approvals' }),
    h('p', { class: 'muted', 'data-testid': 'approvals-note', text: "This account's own money moves above its agents' require_approval_above_usd, waiting for an owner's decision. Approving sends the move (re-checked first); rejecting fails it. Other accounts' approvals are theirs to decide and are not shown here." }),
    h('p', { class: 'tabs' }, tabs), body)
  const refresh = async (force = false) => {
    if (!force && body.querySelector('form.reason')) return
    const page = await api(`/approvals?status=${status}&limit=50${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)
    const rows = page.approvals.map((a) => h('tr', { 'data-testid': 'approval-row', 'data-id': a.id, 'data-kind': a.kind },
      h('td', { text: when(a.requestedAt) }), h('td', {}, h('a', { href: `#/agent/${a.agentId}` }, short(a.agentId))), h('td', { text: a.kind }),
      h('td', { 'data-testid': 'approval-what', text: approvalWhat(a.operation) }), h('td', { text: `$${a.usdValue}` }), h('td', { text: `$${a.thresholdUsd}` }),
      h('td', { text: when(a.expiresAt) }), h('td', {}, badge(a.status, 'approval-status'), ' ', badge(a.operation.status)),
      h('td', {}, a.status === 'pending'
        ? [action('Approve', `/approvals/${a.id}/approve`, () => refresh(true), { testid: 'approve', confirm: 'Confirm approval', note: `Sends ${approvalWhat(a.operation)} ($${a.usdValue}) once re-checked.` }),
           action('Reject', `/approvals/${a.id}/reject`, () => refresh(true), { danger: true, testid: 'reject' })]
        : h('span', { class: 'muted', text: `${a.decidedBy ?? 'expired'}${a.reason ? `: ${a.reason}` : ''}` }))))
    put(body, table(['requested', 'agent', 'kind', 'what', 'USD', 'threshold', 'expires', 'status', 'decision'], rows.length ? rows : empty(9, `No ${status} approvals.`), 'approvals-table'),
      page.nextCursor ? h('a', { href: `#/approvals?status=${status}&cursor=${encodeURIComponent(page.nextCursor)}`, 'data-testid': 'approvals-next', text: 'Older →' }) : null)
  }
  every(5000, () => refresh())
}

// ---------- routing ----------

async function route() {
  for (const c of cleanups) c()
  cleanups = []
  const [path, query] = location.hash.slice(1).split('?')
  const q = new URLSearchParams(query ?? '')
  try {
    if (!sessionStorage.getItem('opsKey')) {
      // Without a key, the browser's SIWE session (if any) signs in: asked without a 401 when there is none.
      const session = await loadSession()
      if (!session?.signedIn) return showSignIn()
      if (!session.isOperator) return showSignIn(new ApiError(403, { code: 'forbidden' }))
    } else await api('/ops/overview') // whose key: 401 and 403 show the sign-in page
  } catch (err) {
    return showSignIn(err instanceof ApiError ? err : undefined)
  }
  nav.hidden = false
  const parts = (path || '/').split('/').filter(Boolean)
  if (parts[0] === 'actors') return actors(q)
  if (parts[0] === 'actor' && parts[1]) return actorView(decodeURIComponent(parts[1]))
  if (parts[0] === 'agent' && parts[1]) return agentView(parts[1])
  if (parts[0] === 'dead-letters') return deadLetters()
  if (parts[0] === 'approvals') return approvalsView(q)
  return overview()
}

document.getElementById('search').addEventListener('submit', (e) => {
  e.preventDefault()
  const term = new FormData(e.target).get('q')
  if (term) location.hash = `#/actors?q=${encodeURIComponent(String(term).trim())}`
})
document.getElementById('signout').addEventListener('click', async () => {
  const usedSession = !sessionStorage.getItem('opsKey')
  sessionStorage.clear()
  // Signed in with the SIWE session: end it, or the next view would sign in with the cookie again.
  if (usedSession) await api('/auth/logout', { method: 'POST' }).catch(() => {})
  sessionCsrf = null
  showSignIn()
  history.replaceState(null, '', '#/')
})
window.addEventListener('hashchange', route)
void route()

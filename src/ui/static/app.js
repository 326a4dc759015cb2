/**
 * The live calls page (docs/ui.md): wires the form, the connection (session.js), the model
 * (calls.js) and the table (table.js). The domain and token typed in are kept in this module's
 * memory only (never localStorage, sessionStorage or cookies) for as long as the page is
 * connected, to ask a fresh ticket when the connection must be opened again; "Disconnect" and
 * closing the page forget them.
 */
import { applyMessage, createCalls, liveCount, rowsOf, whoOf } from './calls.js'
import { CallsTable } from './table.js'
import { monitorUri, requestTicket, socketUrl } from './session.js'

const $ = (id) => document.getElementById(id)
const prefix = document.querySelector('meta[name="cod-api-prefix"]')?.getAttribute('content') ?? '/api'

const form = $('connect-form')
const domainInput = $('domain')
const tokenInput = $('token')
const connectButton = $('connect-button')
const session = $('session')
const sessionDomain = $('session-domain')
const disconnectButton = $('disconnect')
const statusRegion = $('status')
const errorRegion = $('error')
const callsSection = $('calls')
const liveText = $('live-count')
const limitText = $('limit')
const meter = $('usage')
const empty = $('empty')
const table = new CallsTable($('rows'))

/** Close codes after which the page does not reconnect by itself (docs/cti.md "Connection limits and close codes"). */
const FINAL_CLOSES = new Map([
  [1008, 'Refused: this domain already has the most live calls pages (or other monitors) of this name open. Close one and connect again.'],
  [4001, 'A newer connection took this one\'s place. Connect again to take it back.'],
])
/** Ticket refusals that another try cannot fix (wrong token, unknown domain, blocked for failures). */
const FINAL_TICKET_STATUSES = new Set([400, 401, 403, 404, 429])
const RETRY_MIN_MS = 1000
const RETRY_MAX_MS = 30_000

let credentials = null
let socket = null
/** Bumped on every (dis)connection, so that callbacks of an older socket do nothing. */
let generation = 0
let retryMs = RETRY_MIN_MS
let retryTimer = null
let ticker = null
let calls = createCalls()

const announce = (text) => {
  statusRegion.textContent = text
}
const showError = (text) => {
  errorRegion.textContent = text
}

function render() {
  const live = liveCount(calls)
  table.render(rowsOf(calls, Date.now()))
  empty.hidden = calls.channels.size > 0
  liveText.textContent = String(live)
  if (calls.limit === null) {
    limitText.textContent = 'unknown'
    meter.hidden = true
  } else {
    limitText.textContent = String(calls.limit)
    meter.hidden = false
    meter.max = Math.max(1, calls.limit)
    meter.high = Math.max(1, calls.limit) * 0.8
    meter.value = Math.min(live, meter.max)
  }
  document.title = `(${live}) Live calls · ${calls.domain ?? ''}`
}

function showConnectedView(domain) {
  form.hidden = true
  session.hidden = false
  sessionDomain.textContent = domain
  callsSection.hidden = false
}

function showForm() {
  form.hidden = false
  session.hidden = true
  callsSection.hidden = true
  connectButton.disabled = false
  document.title = 'Live calls'
}

function stop() {
  generation += 1
  clearTimeout(retryTimer)
  clearInterval(ticker)
  retryTimer = null
  ticker = null
  if (socket !== null) socket.close(1000, 'closed by the operator')
  socket = null
  credentials = null
  calls = createCalls()
  table.render([])
}

function retryLater(why) {
  const gen = generation
  const waitS = Math.round(retryMs / 1000)
  announce(`${why} Connecting again in ${waitS} s.`)
  retryTimer = setTimeout(() => {
    if (gen === generation) void open()
  }, retryMs)
  retryMs = Math.min(retryMs * 2, RETRY_MAX_MS)
}

/** Gets a ticket and opens the monitor connection with the credentials in memory. */
async function open() {
  if (credentials === null) return
  const gen = ++generation
  const { domain, token } = credentials
  const uri = monitorUri(prefix)
  announce(`Connecting to ${domain}…`)
  const ticket = await requestTicket(prefix, domain, token, uri)
  if (gen !== generation) return
  if (!ticket.ok) {
    if (FINAL_TICKET_STATUSES.has(ticket.status)) {
      const wasConnected = socket !== null || calls.domain !== null
      stop()
      showForm()
      announce('Not connected.')
      const sentence = /[.!?]$/.test(ticket.description) ? ticket.description : `${ticket.description}.`
      showError(`Refused (${ticket.status} ${ticket.id}): ${sentence}${wasConnected ? '' : ' Check the domain and the token.'}`)
      domainInput.focus()
      return
    }
    return retryLater(`The daemon did not give a ticket (${ticket.status === 0 ? 'unreachable' : `${ticket.status} ${ticket.id}`}).`)
  }
  const ws = new WebSocket(socketUrl(location, uri, ticket.ticket))
  socket = ws
  let opened = false
  ws.addEventListener('open', () => {
    if (gen !== generation) return
    opened = true
    retryMs = RETRY_MIN_MS
  })
  ws.addEventListener('message', (e) => {
    if (gen !== generation || typeof e.data !== 'string') return
    let msg
    try {
      msg = JSON.parse(e.data)
    } catch {
      return
    }
    const change = applyMessage(calls, msg)
    switch (change.kind) {
      case 'snapshot':
        showError('')
        callsSection.classList.remove('stale')
        callsSection.removeAttribute('aria-busy')
        showConnectedView(calls.domain ?? domain)
        announce(`Connected to ${calls.domain ?? domain}: ${liveCount(calls)} live channel${liveCount(calls) === 1 ? '' : 's'}.`)
        clearInterval(ticker)
        ticker = setInterval(render, 1000)
        break
      case 'added':
        announce(`New call: ${whoOf(change.channel)}, ${change.channel.state}.`)
        break
      case 'removed':
        announce(`Call ended: ${whoOf(change.channel)}.`)
        break
      case 'system':
        showError(change.description)
        break
      default:
        break
    }
    render()
  })
  ws.addEventListener('close', (e) => {
    if (gen !== generation) return
    socket = null
    clearInterval(ticker)
    ticker = null
    const final = FINAL_CLOSES.get(e.code)
    if (final !== undefined) {
      stop()
      showForm()
      announce('Not connected.')
      showError(final)
      return
    }
    // What is shown may be out of date until the new snapshot: greyed out, and said so.
    callsSection.classList.add('stale')
    callsSection.setAttribute('aria-busy', 'true')
    retryLater(opened ? 'The connection was lost; the calls shown may be out of date.' : 'The connection was refused.')
  })
}

form.addEventListener('submit', (e) => {
  e.preventDefault()
  const domain = domainInput.value.trim()
  const token = tokenInput.value
  if (domain === '' || token === '') {
    showError('Enter the domain and its API token.')
    return
  }
  stop()
  showError('')
  credentials = { domain, token }
  // The token leaves the field: from here on it is only in this module's memory.
  tokenInput.value = ''
  connectButton.disabled = true
  retryMs = RETRY_MIN_MS
  void open().finally(() => {
    connectButton.disabled = false
  })
})

disconnectButton.addEventListener('click', () => {
  stop()
  showForm()
  showError('')
  announce('Disconnected; the token was forgotten.')
  domainInput.focus()
})

showForm()

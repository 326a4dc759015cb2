/**
 * Which events one ESL connection receives, and in which format: the `event`, `nixevent`,
 * `noevents` and `filter` commands (mod_event_socket.c parse_command) and the event_handler
 * test each fired event goes through, filter rules included. Each command returns the reply
 * text FreeSWITCH sends.
 */
import type { SimEvent } from '../model/events.js'
import { EVENT_NAMES, eventName } from './event-names.js'
import type { EventFormat } from './format.js'

export class EventSubscription {
  private fmt: EventFormat = 'plain'
  private eventsOn = false
  private all = false
  private readonly names = new Set<string>()
  private customAll = false
  private readonly customs = new Set<string>()
  private readonly filters: Array<[string, string]> = []

  get format(): EventFormat {
    return this.fmt
  }

  /** Whether `event` or `nixevent` turned events on (and `noevents` has not turned them off). */
  get listening(): boolean {
    return this.eventsOn
  }

  /** event [plain|json|xml] <names...> [CUSTOM <subclasses...>] */
  event(line: string): string {
    const tokens = line.split(' ').slice(1)
    let keyCount = 0
    let custom = false
    tokens.forEach((token, i) => {
      if (i === 0) {
        const f = token.toLowerCase()
        if (f === 'xml' || f === 'plain' || f === 'json') {
          this.fmt = f
          return
        }
      }
      if (custom) {
        if (token !== '') this.customs.add(token)
        return
      }
      const name = eventName(token)
      if (name === undefined) return
      keyCount++
      if (name === 'ALL') {
        this.all = true
        this.customAll = true
      }
      this.names.add(name)
      if (name === 'CUSTOM') custom = true
    })
    if (keyCount === 0) return '-ERR no keywords supplied'
    this.eventsOn = true
    return `+OK event listener enabled ${this.fmt}`
  }

  /** nixevent <names...> [CUSTOM <subclasses...>] */
  nixevent(line: string): string {
    const tokens = line.split(' ').slice(1)
    let keyCount = 0
    let custom = false
    for (const token of tokens) {
      if (custom) {
        this.customs.delete(token)
        continue
      }
      const name = eventName(token)
      if (name === undefined) continue
      keyCount++
      if (name === 'CUSTOM') custom = true
      else if (name === 'ALL') {
        this.all = false
        this.names.clear()
      } else {
        if (this.all) {
          this.all = false
          for (const n of EVENT_NAMES) if (n !== 'ALL') this.names.add(n)
        }
        this.names.delete(name)
      }
    }
    if (keyCount === 0) return '-ERR no keywords supplied'
    this.eventsOn = true
    return '+OK events nixed'
  }

  noevents(): string {
    if (!this.eventsOn) return '-ERR not listening for events'
    this.eventsOn = false
    this.all = false
    this.customAll = false
    this.names.clear()
    this.customs.clear()
    return '+OK no longer listening for events'
  }

  /** filter [add] <header> <value> | filter delete <header> [<value>] | filter delete all */
  filter(text: string): string {
    const rest = text.replace(/^ +/, '')
    const sp = rest.indexOf(' ')
    let name = sp < 0 ? rest : rest.slice(0, sp)
    let value: string | undefined = sp < 0 ? undefined : rest.slice(sp + 1)
    if (name.toLowerCase() === 'delete' && value !== undefined) {
      const sp2 = value.indexOf(' ')
      name = sp2 < 0 ? value : value.slice(0, sp2)
      value = sp2 < 0 ? undefined : value.slice(sp2 + 1)
      if (name.toLowerCase() === 'all') this.filters.splice(0)
      else {
        for (let i = this.filters.length - 1; i >= 0; i--) {
          const f = this.filters[i] as [string, string]
          if (f[0].toLowerCase() === name.toLowerCase() && (value === undefined || f[1] === value)) this.filters.splice(i, 1)
        }
      }
      return `+OK filter deleted. [${name}][${value ?? ''}]`
    }
    if (value === undefined) return '-ERR invalid syntax'
    if (name.toLowerCase() === 'add') {
      const sp2 = value.indexOf(' ')
      name = sp2 < 0 ? value : value.slice(0, sp2)
      value = sp2 < 0 ? '' : value.slice(sp2 + 1)
    }
    this.filters.push([name, value])
    return `+OK filter added. [${name}]=[${value}]`
  }

  /** event_handler: whether this connection receives `ev` (subscribed names, CUSTOM subclasses, filters). */
  wants(ev: SimEvent): boolean {
    if (!this.eventsOn) return false
    let send = this.all || this.names.has(ev.name)
    if (send && ev.name === 'CUSTOM' && !this.customAll) {
      const sub = header(ev, 'Event-Subclass')
      send = sub === undefined || this.customs.has(sub)
    }
    if (!send || this.filters.length === 0) return send
    send = false
    for (const [name, value] of this.filters) {
      const hval = header(ev, name)
      if (hval === undefined) continue
      let pos = true
      let i = 0
      for (; i < value.length; i++) {
        const c = value[i]
        if (c === '+') pos = true
        else if (c === '-') pos = false
        else if (c !== ' ') break
      }
      const compTo = value.slice(i)
      if (send && pos) continue
      const cmp = value.startsWith('/') ? regexTest(compTo, hval) : hval.toLowerCase() === compTo.toLowerCase()
      if (cmp) {
        if (pos) send = true
        else {
          send = false
          break
        }
      }
    }
    return send
  }
}

/**
 * Each fired event's headers by lower-case name (the first of a name, as switch_event_get_header
 * finds it), built once per event when a filter first reads it: every subscriber's every filter
 * reads the same event, and a scan of its ~150 headers per filter made the simulator the
 * bottleneck of the benchmarks.
 */
const byName = new WeakMap<SimEvent, Map<string, string>>()

function header(ev: SimEvent, name: string): string | undefined {
  let map = byName.get(ev)
  if (map === undefined) {
    map = new Map()
    for (const [k, v] of ev.headers) {
      const lower = k.toLowerCase()
      if (!map.has(lower)) map.set(lower, v)
    }
    byName.set(ev, map)
  }
  return map.get(name.toLowerCase())
}

/** switch_regex_perform with a `/pattern/flags` filter value. */
function regexTest(pattern: string, value: string): boolean {
  const m = /^\/(.*)\/([a-z]*)$/s.exec(pattern)
  try {
    return m === null ? new RegExp(pattern.replace(/^\//, '')).test(value) : new RegExp(m[1] as string, (m[2] ?? '').includes('i') ? 'i' : '').test(value)
  } catch {
    return false
  }
}

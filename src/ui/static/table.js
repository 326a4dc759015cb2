/**
 * Draws the live calls table from the model's rows (calls.js), keyed by channel UUID so that an
 * update changes a row in place (a screen reader keeps its place; nothing flickers). Every value
 * goes in with textContent: a caller name like `<img onerror=...>` is shown as text, never
 * parsed (the page's CSP also forbids markup from strings: src/ui/headers.ts).
 */

const COLUMNS = ['who', 'endUser', 'direction', 'state', 'duration', 'peer', 'actions']

export class CallsTable {
  /** @param {HTMLTableSectionElement} tbody */
  constructor(tbody) {
    this.tbody = tbody
    /** @type {Map<string, HTMLTableRowElement>} */
    this.rows = new Map()
  }

  /** @param {Array<Record<string, string>>} rows in display order */
  render(rows) {
    const seen = new Set()
    let previous = null
    for (const row of rows) {
      seen.add(row.uuid)
      let tr = this.rows.get(row.uuid)
      if (tr === undefined) {
        tr = this.createRow(row.uuid)
        this.rows.set(row.uuid, tr)
      }
      this.fill(tr, row)
      // Keep the display order with as few moves as possible.
      const wanted = previous === null ? this.tbody.firstElementChild : previous.nextElementSibling
      if (wanted !== tr) this.tbody.insertBefore(tr, wanted)
      previous = tr
    }
    for (const [uuid, tr] of this.rows) {
      if (!seen.has(uuid)) {
        tr.remove()
        this.rows.delete(uuid)
      }
    }
  }

  createRow(uuid) {
    const tr = document.createElement('tr')
    tr.dataset.uuid = uuid
    for (const column of COLUMNS) {
      // The first cell names the row for screen readers.
      const cell = document.createElement(column === 'who' ? 'th' : 'td')
      if (column === 'who') {
        cell.scope = 'row'
        const name = document.createElement('span')
        name.className = 'who'
        const user = document.createElement('span')
        user.className = 'user'
        cell.append(name, user)
      } else if (column === 'state') {
        const badge = document.createElement('span')
        badge.className = 'state'
        // A recorded call says so beside its state (CTI's `recording`).
        const rec = document.createElement('span')
        rec.className = 'rec'
        rec.textContent = 'recorded'
        rec.hidden = true
        cell.append(badge, rec)
      } else if (column === 'actions') {
        // The commands of a live leg (docs/ui.md "Using it"); app.js sends them through the HTTP
        // control. The whole column is hidden when watching only (style.css .watch-only).
        const hangup = document.createElement('button')
        hangup.type = 'button'
        hangup.className = 'action'
        hangup.dataset.action = 'hangup'
        hangup.textContent = 'Hang up'
        const transfer = document.createElement('button')
        transfer.type = 'button'
        transfer.className = 'action secondary'
        transfer.dataset.action = 'transfer'
        transfer.textContent = 'Transfer'
        cell.append(hangup, transfer)
      }
      cell.dataset.column = column
      tr.append(cell)
    }
    return tr
  }

  fill(tr, row) {
    for (const cell of tr.cells) {
      const column = cell.dataset.column
      if (column === 'who') {
        setText(cell.querySelector('.who'), row.who)
        setText(cell.querySelector('.user'), row.user)
      } else if (column === 'state') {
        const badge = cell.querySelector('.state')
        setText(badge, row.state)
        if (badge.dataset.state !== row.state) badge.dataset.state = row.state
        const rec = cell.querySelector('.rec')
        if (rec.hidden === row.recording) rec.hidden = !row.recording
      } else if (column === 'actions') {
        // A leg that hung up takes no command; nor does any leg when watching only.
        const hide = !row.commandable
        for (const button of cell.querySelectorAll('button')) {
          if (button.hidden !== hide) button.hidden = hide
          const label = `${button.textContent} ${row.who}`
          if (button.getAttribute('aria-label') !== label) button.setAttribute('aria-label', label)
        }
      } else {
        setText(cell, row[column])
      }
    }
  }
}

/** Writes only what changed (assistive technology re-reads a changed node). */
function setText(node, text) {
  if (node.textContent !== text) node.textContent = text
}

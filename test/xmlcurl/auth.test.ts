/**
 * The xml_curl credentials check remembers accepted headers per credentials object
 * (src/xmlcurl/auth.ts, issue 15): a remembered header must never let anything else in, and a
 * reload's new credentials must check again.
 */
import t from 'tap'
import { credentialsMatch } from '../../src/xmlcurl/auth.js'

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`

t.test('an accepted header is accepted again; others are still checked', async (t) => {
  const credentials = { username: 'freeswitch', password: 'secret' }
  const good = basic('freeswitch', 'secret')
  t.equal(credentialsMatch(good, credentials), true)
  t.equal(credentialsMatch(good, credentials), true, 'remembered')
  t.equal(credentialsMatch(basic('freeswitch', 'secreT'), credentials), false, 'wrong password after an accepted one')
  t.equal(credentialsMatch(basic('freeswitcH', 'secret'), credentials), false, 'wrong user')
  t.equal(credentialsMatch(`${good}x`, credentials), false, 'a longer header')
  t.equal(credentialsMatch(undefined, credentials), false, 'no header')
  t.equal(credentialsMatch('', credentials), false, 'an empty header')
  t.equal(credentialsMatch(`basic  ${good.slice(6)} `, credentials), true, 'another spelling of the same credentials is checked, then accepted')
})

t.test('new credentials (a reload) check the header again', async (t) => {
  const before = { username: 'freeswitch', password: 'old' }
  const header = basic('freeswitch', 'old')
  t.equal(credentialsMatch(header, before), true)
  const after = { username: 'freeswitch', password: 'rotated' }
  t.equal(credentialsMatch(header, after), false, 'the old password after the reload')
  t.equal(credentialsMatch(basic('freeswitch', 'rotated'), after), true)
  t.equal(credentialsMatch(header, before), true, 'the configuration before still has its own')
})

t.test('many distinct accepted spellings never grow the memory without bound, and stay correct', async (t) => {
  const credentials = { username: 'u', password: 'p' }
  const token = Buffer.from('u:p').toString('base64')
  for (let i = 0; i < 50; i++) t.equal(credentialsMatch(`Basic ${token}${' '.repeat(i)}`, credentials), true)
  t.equal(credentialsMatch(basic('u', 'q'), credentials), false)
})

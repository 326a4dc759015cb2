import t from 'tap'
import { answerFetch, FetchForm, NOT_FOUND } from '../../src/xmlcurl/index.js'
import { exampleDomain, findAll, fixture, makeRuntime, otherDomain, parseDocument } from './helpers.js'

const runtime = makeRuntime()
const ask = (form: URLSearchParams) => answerFetch(new FetchForm(form), runtime.directory)
const xmlOf = (form: URLSearchParams): string => {
  const a = ask(form)
  if (!a.found) throw new Error(`expected a document, got not found: ${a.reason}`)
  return a.xml
}

// The shape FreeSWITCH 1.10.12 accepted (xml_curl/working-directory.xml,
// test/fixtures/freeswitch/xml_curl/07-serve-directory-register.txt and
// 08-serve-directory-user-call.txt), with our user, our dial-string, user_context = the domain and
// our variables.
const ALICE = `<document type="freeswitch/xml">
  <section name="directory">
    <domain name="example.test">
      <params>
        <param name="dial-string" value="{presence_id=\${dialed_user}@\${dialed_domain}}\${sofia_contact(*/\${dialed_user}@\${dialed_domain})}"/>
      </params>
      <groups>
        <group name="default">
          <users>
            <user id="alice" number-alias="1001">
              <params>
                <param name="password" value="alice-sip-secret"/>
                <param name="dial-string" value="{presence_id=\${dialed_user}@\${dialed_domain}}\${sofia_contact(*/\${dialed_user}@\${dialed_domain})}"/>
                <param name="sip-force-user" value="alice"/>
              </params>
              <variables>
                <variable name="user_context" value="example.test"/>
                <variable name="effective_caller_id_name" value="Alice"/>
                <variable name="effective_caller_id_number" value="1001"/>
                <variable name="cod_user_id" value="1"/>
                <variable name="cod_domain" value="example.test"/>
              </variables>
            </user>
          </users>
        </group>
      </groups>
    </domain>
  </section>
</document>
`

t.test('sip_auth (fixture xml_curl/01-register-1001) for a user by name', async (t) => {
  const xml = xmlOf(fixture('01-sip-auth-register', { user: 'alice', sip_auth_username: 'alice' }))
  t.equal(xml, ALICE)
})

t.test('a user asked by extension gets the same entry: id = name, number-alias = extension (fixture xml_curl/08-serve-directory-user-call)', async (t) => {
  t.equal(xmlOf(fixture('01-sip-auth-register', { user: '1001' })), ALICE)
  t.equal(xmlOf(fixture('01-sip-auth-register', { user: 'ALICE' })), ALICE, 'FreeSWITCH compares user ids without case')
})

t.test('sip_auth for an INVITE (fixture xml_curl/05-invite-1004-to-1002) and user_call (fixtures xml_curl/02, 04, 05)', async (t) => {
  t.equal(xmlOf(fixture('05-sip-auth-invite', { user: '1001' })), ALICE)
  t.equal(xmlOf(fixture('02-user-call', { user: 'alice' })), ALICE)
  t.equal(xmlOf(fixture('04-user-call-1002', { user: '1001' })), ALICE)
  const bob = parseDocument(xmlOf(fixture('05-user-call-1002')))
  t.same(findAll(bob, 'user')[0]?.attrs, { id: 'bob', 'number-alias': '1002' })
})

t.test('user_exists and user_data (fixture xml_curl/06-other-lookups: no action, user_data adds type=var)', async (t) => {
  t.equal(xmlOf(fixture('06-user-exists')), ALICE)
  t.equal(xmlOf(fixture('06-user-data')), ALICE)
})

t.test('a user without extension has no number-alias; a user without label shows the name', async (t) => {
  const doc = parseDocument(xmlOf(fixture('01-sip-auth-register', { user: 'dave' })))
  t.same(findAll(doc, 'user')[0]?.attrs, { id: 'dave' })
  const vars = Object.fromEntries(findAll(doc, 'variable').map((v) => [v.attrs.name, v.attrs.value]))
  t.same(vars, {
    user_context: 'example.test',
    effective_caller_id_name: 'dave',
    effective_caller_id_number: 'dave',
    cod_user_id: '4',
    cod_domain: 'example.test',
  })
})

t.test('the other domain answers with its own user and context', async (t) => {
  const doc = parseDocument(xmlOf(fixture('01-sip-auth-register', { key_value: 'other.test', domain: 'other.test', user: '1009' })))
  t.equal(findAll(doc, 'domain')[0]?.attrs.name, 'other.test')
  t.same(findAll(doc, 'user')[0]?.attrs, { id: 'mallory', 'number-alias': '1009' })
  t.equal(findAll(doc, 'variable').find((v) => v.attrs.name === 'user_context')?.attrs.value, 'other.test')
})

t.test('what is not ours gets "not found"', async (t) => {
  const cases: Array<[string, URLSearchParams]> = [
    ['unknown user (FreeSWITCH then answers SUBSCRIBER_ABSENT, esl/15)', fixture('01-sip-auth-register', { user: '9999' })],
    ['unknown domain', fixture('01-sip-auth-register', { key_value: 'nowhere.test', domain: 'nowhere.test' })],
    ["another domain's user asked in example.test", fixture('01-sip-auth-register', { user: 'mallory' })],
    ["another domain's extension asked in example.test", fixture('01-sip-auth-register', { user: '1009' })],
    ['a group name is not a SIP user', fixture('01-sip-auth-register', { user: 'sales' })],
    ['domain field differs from key_value', fixture('01-sip-auth-register', { domain: 'other.test' })],
    ['reloadacl network-list (fixture xml_curl/06-other-lookups)', fixture('06-network-list')],
    ['profile rescan gateways (fixture xml_curl/06-other-lookups)', fixture('06-gateways')],
    ['no user field', fixture('01-sip-auth-register', { user: null })],
    ['empty user', fixture('01-sip-auth-register', { user: '' })],
    ['no key field', fixture('01-sip-auth-register', { key: null })],
    ['lookup by another attribute', fixture('01-sip-auth-register', { key: 'ip' })],
    ['an action we do not serve', fixture('01-sip-auth-register', { action: 'message-count' })],
    ['tag_name is not domain', fixture('01-sip-auth-register', { tag_name: 'user' })],
    ['key_name is not name', fixture('01-sip-auth-register', { key_name: 'id' })],
    ['the configuration section', fixture('01-sip-auth-register', { section: 'configuration', tag_name: 'configuration', key_value: 'sofia.conf' })],
    ['the phrases section', fixture('01-sip-auth-register', { section: 'phrases' })],
    ['no section', fixture('01-sip-auth-register', { section: null })],
  ]
  for (const [name, form] of cases) t.equal(ask(form).found, false, name)
})

t.test('a field sent twice with two values is refused, whichever comes first', async (t) => {
  const form = fixture('01-sip-auth-register', { user: 'alice' })
  form.append('user', 'mallory')
  t.equal(ask(form).found, false)
  const form2 = fixture('01-sip-auth-register', { user: 'mallory' })
  form2.append('user', 'alice')
  t.equal(ask(form2).found, false)
  const form3 = fixture('01-sip-auth-register', { user: 'alice' })
  form3.append('section', 'dialplan')
  t.equal(ask(form3).found, false)
})

/** What `xml_locate directory domain name <d>` posts: its event repeats `section` (mod_commands.c xml_locate_function). */
const xmlLocate = (domain: string) => {
  const form = fixture('06-user-exists', { key: null, user: null, domain: null, key_value: domain, 'Event-Calling-Function': 'xml_locate_function' })
  form.append('section', 'directory')
  form.append('tag', 'domain')
  form.append('tag_attr_name', 'name')
  form.append('tag_attr_val', domain)
  return form
}

t.test('a lookup of the domain alone (xml_locate, domain_exists): the domain and its params, no users', async (t) => {
  t.equal(
    xmlOf(xmlLocate('example.test')),
    `<document type="freeswitch/xml">
  <section name="directory">
    <domain name="example.test">
      <params>
        <param name="dial-string" value="{presence_id=\${dialed_user}@\${dialed_domain}}\${sofia_contact(*/\${dialed_user}@\${dialed_domain})}"/>
      </params>
    </domain>
  </section>
</document>
`,
  )
  t.equal(ask(xmlLocate('nowhere.test')).found, false, 'unknown domain')
  t.equal(ask(fixture('01-sip-auth-register', { user: null, key: null })).found, false, 'an action without a user is not a domain lookup')
})

t.test('the not-found document is the captured one, exactly', async (t) => {
  t.equal(NOT_FOUND, '<document type="freeswitch/xml"><section name="result"><result status="not found"/></section></document>')
})

t.test('documents are written once per configuration and served as the same bytes until a reload', async (t) => {
  const first = ask(fixture('01-sip-auth-register', { user: 'alice' }))
  const again = ask(fixture('04-user-call-1002', { user: '1001' }))
  if (!first.found || !again.found) throw new Error('expected documents')
  t.ok(first.bytes !== undefined && first.bytes === again.bytes, 'the same kept bytes, whichever lookup named the user')
  t.equal(first.bytes?.toString('utf8'), ALICE, 'the bytes are the document')
  t.equal(first.xml, ALICE)
  const domainOnce = ask(xmlLocate('example.test'))
  const domainTwice = ask(xmlLocate('EXAMPLE.test'))
  t.ok(domainOnce.found && domainTwice.found && domainOnce.bytes === domainTwice.bytes && domainOnce.bytes?.toString('utf8') === domainOnce.xml, "the domain's document is kept too")

  // A reload builds a new Directory from the new file (runtime/store.ts runtimeOf): its documents
  // are written afresh, while the runtime before it (requests still in flight) keeps its own.
  const rotated = { ...exampleDomain, users: [{ ...exampleDomain.users[0], label: 'Alice B', password: 'rotated-sip-secret' }, ...exampleDomain.users.slice(1)] }
  const reloaded = makeRuntime([rotated, otherDomain])
  const after = answerFetch(new FetchForm(fixture('01-sip-auth-register', { user: 'alice' })), reloaded.directory)
  if (!after.found) throw new Error('expected a document after the reload')
  const params = Object.fromEntries(findAll(parseDocument(after.xml), 'param').map((p) => [p.attrs.name, p.attrs.value]))
  t.equal(params.password, 'rotated-sip-secret', 'the new password after the reload')
  t.match(after.bytes?.toString('utf8'), /value="Alice B"/, 'the new label, in the bytes served')
  t.equal(xmlOf(fixture('01-sip-auth-register', { user: 'alice' })), ALICE, 'the configuration before the reload still answers with its own document')
})

import t from 'tap'
import { buildCallParams, stringifyVariable } from '../../../src/ivr/fetch/call-params.js'

t.test('the always-sent parameters, in the order of docs/ivr.md', async (t) => {
  const p = buildCallParams({
    uuid: '2b1c6a0e-0000-4000-8000-000000000001',
    status: 'in-progress',
    direction: 'outbound',
    calledNumber: '3001',
    callingNumber: '0501231001',
    callerName: 'Alice',
    domainName: 'example.test',
    anonymous: false,
    startTime: 1795327704161924,
    answerTime: '1795327705000000',
  })
  t.same(p, {
    CallUUID: '2b1c6a0e-0000-4000-8000-000000000001',
    CallStatus: 'in-progress',
    Direction: 'outbound',
    CalledNumber: '3001',
    CallingNumber: '0501231001',
    CallerName: 'Alice',
    DomainName: 'example.test',
    Anonymous: 'false',
    StartTime: '1795327704161924',
    AnswerTime: '1795327705000000',
  })
  t.same(Object.keys(p), ['CallUUID', 'CallStatus', 'Direction', 'CalledNumber', 'CallingNumber', 'CallerName', 'DomainName', 'Anonymous', 'StartTime', 'AnswerTime'])
})

t.test('unknown values: empty strings, "false", and time 0 as FreeSWITCH reports it', async (t) => {
  const p = buildCallParams({ uuid: 'u', status: 'ringing', direction: 'inbound', domainName: 'd.test' })
  t.match(p, { CalledNumber: '', CallingNumber: '', CallerName: '', Anonymous: 'false', StartTime: '0', AnswerTime: '0' })
  t.notOk('UserId' in p || 'UserName' in p || 'GroupId' in p || 'GroupName' in p || 'Digits' in p)
  t.notOk('TransferFailureReason' in p || 'Error' in p)
  // Odd time values never leak as "NaN" or "1.5e15" into the form.
  t.match(buildCallParams({ uuid: 'u', status: 'ringing', direction: 'inbound', domainName: 'd', startTime: Number.NaN, answerTime: 'soon' }), {
    StartTime: '0',
    AnswerTime: '0',
  })
  t.match(buildCallParams({ uuid: 'u', status: 'ringing', direction: 'inbound', domainName: 'd', startTime: 1795327704161924n, answerTime: 12.7 }), {
    StartTime: '1795327704161924',
    AnswerTime: '12',
  })
})

t.test('optional parameters appear when known', async (t) => {
  const p = buildCallParams({
    uuid: 'u',
    status: 'error',
    direction: 'outbound',
    domainName: 'example.test',
    anonymous: true,
    user: { id: '1', name: 'alice' },
    group: { id: '10', name: 'sales' },
    digits: '',
    transferFailureReason: 'busy',
    error: 'document invalid: unknown element <Foo>',
  })
  t.match(p, {
    Anonymous: 'true',
    UserId: '1',
    UserName: 'alice',
    GroupId: '10',
    GroupName: 'sales',
    Digits: '',
    TransferFailureReason: 'busy',
    Error: 'document invalid: unknown element <Foo>',
    CallStatus: 'error',
  })
  const onlyName = buildCallParams({ uuid: 'u', status: 'ringing', direction: 'inbound', domainName: 'd', group: { name: 'sales' } })
  t.equal(onlyName.GroupName, 'sales')
  t.notOk('GroupId' in onlyName)
})

t.test('Set variables become var_<name>, non-strings as JSON', async (t) => {
  const p = buildCallParams({
    uuid: 'u',
    status: 'in-progress',
    direction: 'inbound',
    domainName: 'd',
    variables: { choice: '2', count: 3, ok: true, none: null, data: { balance: 12.5, tags: ['a'] }, list: [1, 'x'] },
  })
  t.match(p, {
    var_choice: '2',
    var_count: '3',
    var_ok: 'true',
    var_none: 'null',
    var_data: '{"balance":12.5,"tags":["a"]}',
    var_list: '[1,"x"]',
  })
  const params = new URLSearchParams(p)
  t.equal(params.get('var_data'), '{"balance":12.5,"tags":["a"]}', 'survives form encoding')
})

t.test('stringifyVariable never throws', async (t) => {
  const cyclic: Record<string, unknown> = {}
  cyclic.self = cyclic
  t.equal(stringifyVariable(cyclic), '')
  t.equal(stringifyVariable(undefined), '')
  t.equal(stringifyVariable(10n), '10')
  t.equal(stringifyVariable({ big: 1n }), '')
  t.equal(stringifyVariable('plain'), 'plain')
})

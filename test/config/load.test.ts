import t from 'tap'
import { loadConfig } from '../../src/config/load.js'
import { Directory } from '../../src/directory/directory.js'

t.test('the shipped example configuration loads', async (t) => {
  const r = await loadConfig('conf/daemon.yaml')
  if (!r.ok) return t.fail(r.error.map((p) => `${p.file} ${p.path} ${p.reason}`).join('\n'))
  t.equal(r.value.domains.length, 1)
  const d = new Directory(r.value.domains).domain('example.test')
  t.ok(d)
  t.equal(d?.resolveDestination('1002')?.kind, 'user')
  t.equal(d?.resolveDestination('sales')?.kind, 'group')
  t.equal(d?.resolveDestination('3001')?.kind, 'extension')
  t.equal(d?.resolveDestination('0311112222')?.kind, 'pstn')
  t.equal(d?.resolveDestination('nobody'), undefined)
})

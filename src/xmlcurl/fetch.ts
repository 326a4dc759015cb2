/**
 * One mod_xml_curl fetch, answered from memory: FreeSWITCH's thread (a REGISTER, a call's
 * routing) waits on this reply, so nothing here does I/O. Whatever is not ours, or is not what
 * FreeSWITCH would send, gets the "not found" document and FreeSWITCH uses its static XML
 * (requests 01-06, 12 in test/fixtures/freeswitch/xml_curl/).
 */
import type { Directory } from '../directory/directory.js'
import { notFound, type SectionAnswer } from './answer.js'
import { answerDialplan } from './dialplan-section.js'
import type { BridgeGate } from './bridge-gate.js'
import { answerDirectory } from './directory-section.js'
import type { FetchForm } from './form.js'
import type { IvrKnown } from './leg.js'
import type { DialplanRecording } from './recording.js'

export function answerFetch(form: FetchForm, directory: Directory, ivrKnown?: IvrKnown, gate?: BridgeGate, recording?: DialplanRecording): SectionAnswer {
  if (form.hasConflicts) return notFound('a form field was sent twice with different values')
  const section = form.get('section')
  switch (section) {
    case 'directory':
      return answerDirectory(form, directory)
    case 'dialplan':
      return answerDialplan(form, directory, ivrKnown, gate, recording)
    default:
      // configuration, phrases, languages, chatplan, channels: static XML.
      return notFound(`section ${section ?? '(none)'}`)
  }
}

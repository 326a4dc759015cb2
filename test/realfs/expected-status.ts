/**
 * The status events each end-to-end scenario (scenarios.ts) gives, one line per leg as
 * trace.ts statusLines writes them (issue 29 item 6): asserted on the simulator
 * (test/e2e/scenario-status.test.ts) and on the real FreeSWITCH (lane.realfs.ts), where the
 * simulator's and the switch's must also be equal. `r1` is the scenario's first request; a
 * completed says its cause and who hung up (docs/events.md 'hangup_by').
 */
export const EXPECTED_STATUS: Readonly<Record<string, readonly string[]>> = {
  'call_user alice (two terminals: one answers, the other loses the race) connected to bob': [
    'r1 destination o:bob: initiated,ringing,answered,completed(NORMAL_CLEARING by origin)',
    'r1 origin o:alice: initiated,ringing,answered,bridged(o:bob),completed(NORMAL_CLEARING by origin)',
    'r1 origin o:alice: initiated,ringing,completed(LOSE_RACE by system)',
  ],
  "call_user with auto_answer: the headers go to the user's legs, not to bob's": [
    'r1 destination o:bob: initiated,ringing,answered,completed(NORMAL_CLEARING by origin)',
    'r1 origin o:alice: initiated,ringing,answered,bridged(o:bob),completed(NORMAL_CLEARING by origin)',
    'r1 origin o:alice: initiated,ringing,completed(LOSE_RACE by system)',
  ],
  'no answer: a PSTN target rings past answer_timeout': [
    'r1 origin o:0322223333: initiated,ringing,completed(NO_ANSWER by system)',
  ],
  "busy: carol's terminal answers 486": [
    'r1 origin o:carol: initiated,completed(USER_BUSY by origin)',
  ],
  'rejected: a PSTN target answers 603': [
    'r1 origin o:0333334444: initiated,completed(CALL_REJECTED by origin)',
  ],
  'unregistered: dave has no terminal, nothing is originated': [
  ],
  'call_group sales: carol busy, alice answers, connected to bob': [
    'r1 destination o:bob: initiated,ringing,answered,completed(NORMAL_CLEARING by origin)',
    'r1 origin o:alice: initiated,ringing,answered,bridged(o:bob),completed(NORMAL_CLEARING by origin)',
    'r1 origin o:alice: initiated,ringing,completed(LOSE_RACE by system)',
    'r1 origin o:carol: initiated,completed(USER_BUSY by origin)',
  ],
  'call_external to bob': [
    'r1 destination o:bob: initiated,ringing,answered,completed(NORMAL_CLEARING by origin)',
    'r1 origin o:0399990000: initiated,ringing,answered,bridged(o:bob),completed(NORMAL_CLEARING by origin)',
  ],
  'call_external to 0501231002': [
    'r1 destination o:bob: initiated,ringing,answered,completed(NORMAL_CLEARING by origin)',
    'r1 origin o:0399990000: initiated,ringing,answered,bridged(o:bob),completed(NORMAL_CLEARING by origin)',
  ],
  'call_external to support': [
    'r1 destination o:bob: initiated,ringing,answered,completed(NORMAL_CLEARING by origin)',
    'r1 origin o:0399990000: initiated,ringing,answered,bridged(o:bob),completed(NORMAL_CLEARING by origin)',
  ],
  'call_external to 2001': [
    'r1 destination o:alice: initiated,ringing,answered,completed(NORMAL_CLEARING by origin)',
    'r1 destination o:alice: initiated,ringing,completed(LOSE_RACE by system)',
    'r1 destination o:carol: initiated,completed(USER_BUSY by destination)',
    'r1 origin o:0399990000: initiated,ringing,answered,bridged(o:alice),completed(NORMAL_CLEARING by origin)',
  ],
  'call_external to an extension bound to an IVR URL the daemon may not fetch': [
    'r1 origin o:0399990000: initiated,ringing,answered,completed(NORMAL_TEMPORARY_FAILURE by system)',
  ],
  'call_external refuses a PSTN destination': [
  ],
  'call_user bob to a PSTN number through the gateway, presenting a calling number': [
    'r1 destination o:0399998888: initiated,ringing,answered,completed(NORMAL_CLEARING by origin)',
    'r1 origin o:bob: initiated,ringing,answered,bridged(o:0399998888),completed(NORMAL_CLEARING by origin)',
  ],
  "CTI: bob's panel follows a call_external with end_user": [
    'r1 destination o:bob: initiated,ringing,answered,completed(NORMAL_CLEARING by origin)',
    'r1 origin o:0399990000: initiated,ringing,answered,bridged(o:bob),completed(NORMAL_CLEARING by origin)',
  ],
  'inline IVR: GetDigits playing an http URL (mod_http_cache), the caller presses 1, Transfer to bob': [
    'r1 destination o:bob: initiated,ringing,answered,completed(NORMAL_CLEARING by origin)',
    'r1 origin o:0355556666: initiated,ringing,answered,bridged(o:bob),completed(NORMAL_CLEARING by origin)',
  ],
  'inline IVR: Speak inside GetDigits, the caller presses 1, Transfer to bob': [
    'r1 destination o:bob: initiated,ringing,answered,completed(NORMAL_CLEARING by origin)',
    'r1 origin o:0355556666: initiated,ringing,answered,bridged(o:bob),completed(NORMAL_CLEARING by origin)',
  ],
  'a phone dials an extension bound to an IVR URL (Speak, Hangup)': [
  ],
  'initiate_call pstn_number with ani and group_name, connected to bob': [
    'r1 destination o:bob: initiated,ringing,answered,completed(NORMAL_CLEARING by origin)',
    'r1 origin o:0399990001: initiated,ringing,answered,bridged(o:bob),completed(NORMAL_CLEARING by origin)',
  ],
  'initiate_call user_name bob, connected to a PSTN number': [
    'r1 destination o:0399998888: initiated,ringing,answered,completed(NORMAL_CLEARING by origin)',
    'r1 origin o:bob: initiated,ringing,answered,bridged(o:0399998888),completed(NORMAL_CLEARING by origin)',
  ],
  'D3: a destination user that never answers rings destination_timeout, then both legs end': [
    'r1 destination o:erin: initiated,ringing,completed(NO_ANSWER by system)',
    'r1 origin o:0399990000: initiated,ringing,answered,completed(NO_ANSWER by system)',
  ],
  'D3: a PSTN destination that never answers rings destination_timeout, then both legs end': [
    'r1 destination o:0322223333: initiated,ringing,completed(NO_ANSWER by system)',
    'r1 origin o:bob: initiated,ringing,answered,completed(NO_ANSWER by system)',
  ],
  'channel limit: a call between phones counts; the API is refused beyond the limit': [
    'r1 origin o:carol: initiated,completed(USER_BUSY by origin)',
  ],
}

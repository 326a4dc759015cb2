import t from 'tap'
import { parseIvrDocument } from '../../../src/ivr/document/index.js'
import { reason, refused, wrap } from './helpers.js'

interface Matcher {
  match(found: unknown, wanted: RegExp, message: string): boolean
}

/** Each [inner XML, expected reason pattern]: the document `<IVR>inner</IVR>` must be refused so. */
function table(t: Matcher, rows: readonly (readonly [string, RegExp])[]): void {
  for (const [inner, pattern] of rows) t.match(refused(inner), pattern, inner)
}

t.test('the error carries line, column and path, and a complete reason', async (t) => {
  const r = parseIvrDocument('<IVR>\n  <Answer/>\n  <Play lop="2">a.wav</Play>\n</IVR>')
  t.same(r, {
    ok: false,
    error: {
      reason: 'line 3, column 3 (/IVR/Play[1]): unknown attribute "lop" on <Play> (allowed: loop, terminators)',
      line: 3,
      column: 3,
      path: '/IVR/Play[1]',
    },
  })
  const x = parseIvrDocument('<IVR>\n<Answer>\n</IVR>')
  t.match(x, { ok: false, error: { line: 3, reason: /^line 3, column \d+: not well-formed XML: / } })
})

t.test('not well-formed or not an IVR document', async (t) => {
  t.match(reason(''), /the document is empty/)
  t.match(reason('  \n '), /the document is empty/)
  t.match(reason('hello'), /not well-formed XML/)
  t.match(reason('<IVR>'), /not well-formed XML/)
  t.match(reason('<IVR><Answer></IVR>'), /not well-formed XML: Expected closing tag 'Answer'/)
  t.match(reason('<IVR/>trailing'), /^line 1, column 7: text after the root element: "trailing"/)
  t.match(reason('<IVR/>\n<!-- c -->\n x <!-- d -->'), /^line 1, column 7: text after the root element: "x"/)
  t.equal(reason('<IVR/>\n<!-- c -->\n'), 'accepted')
  t.match(reason('<IVR></IVR>trailing'), /not well-formed XML/)
  t.match(reason('<IVR><Play loop>x</Play></IVR>'), /not well-formed XML: boolean attribute/)
  t.match(reason('<IVR><Play loop="1" loop="2">x</Play></IVR>'), /not well-formed XML: Attribute 'loop' is repeated/)
  t.match(reason('<Foo/>'), /the root element must be <IVR> or <Response>, found <Foo>/)
  t.match(reason('<ivr/>'), /the root element must be <IVR> or <Response>, found <ivr>/)
  t.match(reason('<response/>'), /root element must be/)
  t.match(reason('<IVR/><IVR/>'), /only one root element is allowed, found <IVR> after <IVR>/)
  t.match(reason('<IVR version="1"/>'), /unknown attribute "version" on <IVR> \(it takes no attributes\)/)
  t.match(reason('<IVR xmlns="urn:x"/>'), /unknown attribute "xmlns"/)
  t.match(reason('<!-- only a comment -->'), /no root element|not well-formed/)
})

t.test('no DTD, no entities, no processing instructions', async (t) => {
  t.match(reason('<!DOCTYPE IVR><IVR/>'), /line 1, column 1: <!DOCTYPE> is not allowed/)
  t.match(reason('<!doctype IVR><IVR/>'), /<!doctype> is not allowed/)
  t.match(reason('<?xml version="1.0"?>\n<!DOCTYPE IVR [<!ENTITY x "y">]>\n<IVR><Speak>&x;</Speak></IVR>'), /line 2, column 1: <!DOCTYPE> is not allowed/)
  const laughs =
    '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">' +
    '<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]><IVR><Speak>&lol3;</Speak></IVR>'
  t.match(reason(laughs), /<!DOCTYPE> is not allowed/)
  t.match(reason('<!DOCTYPE IVR SYSTEM "file:///etc/passwd"><IVR/>'), /<!DOCTYPE> is not allowed/)
  t.match(reason('<IVR><!ENTITY x "y"><Answer/></IVR>'), /<!ENTITY> is not allowed/)
  t.match(reason(wrap('<Speak>&x;</Speak>')), /unknown entity &x; \(only &amp; &lt; &gt; &quot; &apos; and &#...; character references: there is no DTD\)/)
  t.match(reason(wrap('<Speak>&nbsp;</Speak>')), /unknown entity &nbsp;/)
  t.match(reason(wrap('<Set var="v" val="&ent;"/>')), /attribute val of <Set>: unknown entity &ent;/)
  t.match(reason(wrap('<Set var="v" val="a & b"/>')), /a bare & must be written &amp;/)
  t.match(reason(wrap('<Set var="v" val="a < b"/>')), /a < in an attribute value must be written &lt;/)
  t.match(reason(wrap('<Speak>&#0;</Speak>')), /&#0; is not an allowed character/)
  t.match(reason(wrap('<Speak>&#xD800;</Speak>')), /is not an allowed character/)
  t.match(reason(wrap('<Speak>&#x110000;</Speak>')), /is not an allowed character/)
  t.match(reason(wrap('<Speak>a\u0001b</Speak>')), /control character U\+0001 is not allowed/)
  t.match(reason(wrap('<Speak>a\u0000b</Speak>')), /control character U\+0000/)
  t.match(reason(wrap('<?php echo 1 ?><Answer/>')), /processing instructions \(<\?php \.\.\.\?>\) are not allowed/)
  t.match(reason('<?xml version="1.0"?><?xml-stylesheet href="a"?><IVR/>'), /processing instructions \(<\?xml-stylesheet/)
  t.match(reason('<IVR/><?xml version="1.0"?>'), /the XML declaration must come first/)
  t.match(reason(wrap('<Speak>a<?pi x?>b</Speak>')), /processing instructions/)
  t.match(reason(wrap('<Answer><?pi x?></Answer>')), /processing instructions/)
  // Names of Object.prototype members are unknown names like any other.
  t.match(reason(wrap('<__proto__/>')), /^line 1, column 7: unknown element or attribute "__proto__"$/)
  t.match(reason(wrap('<Play __proto__="1">a.wav</Play>')), /unknown element or attribute "__proto__"/)
  t.match(reason(wrap('\n<constructor/>')), /^line 2, column 2: unknown element or attribute "constructor"$/)
  t.match(reason(wrap('<Play constructor="1">a.wav</Play>')), /^line 1, column 12: unknown element or attribute "constructor"$/)
  t.match(reason(wrap('<If expr="1"><prototype/></If>')), /unknown element or attribute "prototype"/)
  t.match(reason(wrap('<toString/>')), /\(\/IVR\/toString\[1\]\): unknown element <toString>$/)
  t.match(reason(wrap('<hasOwnProperty/>')), /unknown element <hasOwnProperty>$/)
  t.match(reason(wrap('<Play toString="1">a.wav</Play>')), /unknown attribute "toString" on <Play>/)
  t.match(reason(wrap('<Play valueOf="&bad;">a.wav</Play>')), /attribute valueOf of <Play>: unknown entity/)
  t.match(reason(wrap('<GetDigits><toString/></GetDigits>')), /unknown element <toString>/)
})

t.test('unknown elements and attributes (case-sensitive)', async (t) => {
  table(t, [
    ['<Foo/>', /line 1, column 6 \(\/IVR\/Foo\[1\]\): unknown element <Foo>$/],
    ['<play>a.wav</play>', /unknown element <play> \(names are case-sensitive: did you mean <Play>\?\)/],
    ['<GETDIGITS/>', /did you mean <GetDigits>/],
    ['<Section name="s"><Foo/></Section>', /\(\/IVR\/Section\[1\]\/Foo\[1\]\): unknown element <Foo>/],
    ['<If expr="1"><Then><Bar/></Then></If>', /\/IVR\/If\[1\]\/Then\[1\]\/Bar\[1\]\): unknown element <Bar>/],
    ['<GetDigits><Foo/></GetDigits>', /unknown element <Foo>/],
    ['<If expr="1"><Foo/></If>', /unknown element <Foo>/],
    ['<Play lop="2">a.wav</Play>', /unknown attribute "lop" on <Play> \(allowed: loop, terminators\)/],
    ['<Play Loop="2">a.wav</Play>', /unknown attribute "Loop" on <Play>/],
    ['<Answer now="1"/>', /unknown attribute "now" on <Answer> \(it takes no attributes\)/],
    ['<GetDigits numdigits="1"/>', /unknown attribute "numdigits" on <GetDigits>/],
    ['<GetDigits finishOnkey="#"/>', /unknown attribute "finishOnkey"/],
    ['<Transfer timeout="10">alice</Transfer>', /unknown attribute "timeout" on <Transfer> \(allowed: callingNumber, failureAction, answerTimeout\)/],
    ['<Play purpose="alert">a.wav</Play>', /unknown attribute "purpose" on <Play> .*purpose is only for prompts inside <GetDigits>/],
    ['<GetDigits><Speak purpose="prompt">x</Speak></GetDigits>', /Speak purpose "prompt": must be alert/],
    ['<GetDigits><Speak purpose="Alert">x</Speak></GetDigits>', /Speak purpose "Alert": must be alert/],
    ['<GetDigits><Wait purpose="alert" lenght="1"/></GetDigits>', /unknown attribute "lenght" on <Wait> \(allowed: length, purpose\)/],
    ['<If expr="1" else="x"><Then/></If>', /unknown attribute "else" on <If>/],
    ['<If expr="1"><Then x="1"/></If>', /unknown attribute "x" on <Then>/],
    ['<Section name="s" x="1"/>', /unknown attribute "x" on <Section>/],
  ])
})

t.test('nesting rules', async (t) => {
  table(t, [
    ['<Then/>', /<Then> is only allowed inside <If>, not in <IVR>/],
    ['<Else/>', /<Else> is only allowed inside <If> or <Cond>, not in <IVR>/],
    ['<Case val="1"/>', /<Case> is only allowed inside <Switch>/],
    ['<Default/>', /<Default> is only allowed inside <Switch>/],
    ['<Clause expr="1"/>', /<Clause> is only allowed inside <Cond>/],
    ['<Section name="a"><Section name="b"/></Section>', /<Section> is only allowed at the top level, directly inside the root element, not in <Section>/],
    ['<If expr="1"><Then><Section name="b"/></Then></If>', /<Section> is only allowed at the top level/],
    ['<If expr="1"><Then><Then/></Then></If>', /<Then> is only allowed inside <If>, not in <Then>/],
    ['<Switch expr="1"><Case val="1"><Case val="2"/></Case></Switch>', /<Case> is only allowed inside <Switch>, not in <Case>/],
    ['<Cond><Clause expr="1"><Else/></Clause></Cond>', /<Else> is only allowed inside <If> or <Cond>, not in <Clause>/],
    ['<If expr="1"><Play>a.wav</Play></If>', /<If> may contain only <Then>, <Else>, found <Play>/],
    ['<If expr="1"><Case val="1"/></If>', /<If> may contain only <Then>, <Else>, found <Case>/],
    ['<If expr="1"></If>', /<If> needs exactly one <Then>, found 0/],
    ['<If expr="1"><Else/></If>', /<If> needs exactly one <Then>, found 0/],
    ['<If expr="1"><Then/><Then/></If>', /<If> needs exactly one <Then>, found 2/],
    ['<If expr="1"><Then/><Else/><Else/></If>', /<If> may have only one <Else>/],
    ['<If expr="1"><Else/><Then/></If>', /<Then> must come before <Else>/],
    ['<If expr="1">text<Then/></If>', /unexpected text "text" in <If>/],
    ['<Switch expr="1"></Switch>', /<Switch> needs at least one <Case>/],
    ['<Switch expr="1"><Play>a.wav</Play></Switch>', /<Switch> may contain only <Case>, <Default>, found <Play>/],
    ['<Switch expr="1"><Clause expr="1"/></Switch>', /<Switch> may contain only <Case>, <Default>, found <Clause>/],
    ['<Switch expr="1"><Default/><Case val="1"/></Switch>', /<Default> must be the last child of <Switch>/],
    ['<Switch expr="1"><Case val="1"/><Default/><Default/></Switch>', /<Default> must be the last child/],
    ['<Switch expr="1"><Case val="1"/><Case val="1"/></Switch>', /a <Case> with val "1" is already in this <Switch>/],
    ['<Switch expr="1"><Case/></Switch>', /<Case> needs a val attribute/],
    ['<Cond></Cond>', /<Cond> needs at least one <Clause>/],
    ['<Cond><Else/></Cond>', /<Cond> needs at least one <Clause>/],
    ['<Cond><Then/></Cond>', /<Cond> may contain only <Clause>, <Else>, found <Then>/],
    ['<Cond><Clause expr="1"/><Else/><Clause expr="2"/></Cond>', /<Else> must be the last child of <Cond>/],
    ['<Cond><Clause/></Cond>', /<Clause> needs an expr attribute/],
    ['<GetDigits><Hangup/></GetDigits>', /<GetDigits> may contain only <Play>, <Speak> and <Wait>, found <Hangup>/],
    ['<GetDigits><GetDigits/></GetDigits>', /may contain only <Play>, <Speak> and <Wait>, found <GetDigits>/],
    ['<GetDigits>Press 1</GetDigits>', /unexpected text "Press 1" in <GetDigits>/],
    ['<GetDigits><![CDATA[x]]></GetDigits>', /unexpected text "x" in <GetDigits>/],
    ['Hello<Answer/>', /unexpected text "Hello" in <IVR>/],
    ['<Section name="s">x</Section>', /unexpected text "x" in <Section>/],
    ['<If expr="1"><Then>words</Then></If>', /unexpected text "words" in <Then>/],
    ['<Answer>x</Answer>', /<Answer> takes no text \(found "x"\)/],
    ['<Answer><Hangup/></Answer>', /<Answer> takes no child elements \(found <Hangup>\)/],
    ['<Hangup>now</Hangup>', /<Hangup> takes no text/],
    ['<Park><Answer/></Park>', /<Park> takes no child elements/],
    ['<Wait>1</Wait>', /<Wait> takes no text/],
    ['<Set var="a" val="1">x</Set>', /<Set> takes no text/],
    ['<GetJSON var="a" url="http://a.test/">x</GetJSON>', /<GetJSON> takes no text/],
    ['<Play><Speak>x</Speak></Play>', /<Play> takes text, not elements \(found <Speak>\)/],
    ['<Transfer><Answer/></Transfer>', /<Transfer> takes text, not elements/],
  ])
})

t.test('elements that need text', async (t) => {
  table(t, [
    ['<Play/>', /<Play> needs text: the audio file or http\(s\) URL to play/],
    ['<Play>   </Play>', /<Play> needs text/],
    ['<Speak/>', /<Speak> needs text: the words to speak/],
    ['<GoTo/>', /<GoTo> needs text: the name of a Section/],
    ['<SetErrorHandler></SetErrorHandler>', /<SetErrorHandler> needs text/],
    ['<Redirect/>', /<Redirect> needs text: the URL of the next document/],
    ['<Transfer/>', /<Transfer> needs text: a user, group, extension, DID or number/],
  ])
})

t.test('Sections and their references', async (t) => {
  table(t, [
    ['<Section/>', /<Section> needs a name attribute/],
    ['<Section name=""/>', /Section name "": must be a Section name/],
    ['<Section name="a b"/>', /Section name "a b": must be a Section name/],
    ['<Section name="{{ x }}"/>', /Section name cannot use \{\{ \}\}/],
    ['<Section name="a"/><Section name="a"/>', /\/IVR\/Section\[2\]\): a Section named "a" is defined twice/],
    ['<GoTo>nowhere</GoTo>', /GoTo: there is no Section named "nowhere" \(the document has no Sections\)/],
    ['<GoTo>Menu</GoTo><Section name="menu"/>', /GoTo: there is no Section named "Menu" \(Sections: menu\)/],
    ['<SetErrorHandler>err</SetErrorHandler>', /SetErrorHandler: there is no Section named "err"/],
    ['<Transfer failureAction="failed">alice</Transfer>', /Transfer failureAction: there is no Section named "failed"/],
    ['<Section name="a"><GoTo>b</GoTo></Section>', /\/IVR\/Section\[1\]\/GoTo\[1\]\): GoTo: there is no Section named "b"/],
    ['<If expr="1"><Then><GoTo>b</GoTo></Then></If>', /there is no Section named "b"/],
    ['<GoTo>a/b</GoTo>', /GoTo text "a\/b": must be a Section name/],
  ])
  // A templated target is checked when it runs, not here.
  t.equal(refused('<GoTo>{{ next }}</GoTo>'), 'accepted')
  t.equal(refused('<Transfer failureAction="{{ where }}">alice</Transfer>'), 'accepted')
})

t.test('Set, GetJSON and variable names', async (t) => {
  table(t, [
    ['<Set val="1"/>', /<Set> needs a var attribute/],
    ['<Set var="1x" val="1"/>', /Set var "1x": must be a name of letters, digits and _/],
    ['<Set var="a-b" val="1"/>', /Set var "a-b": must be a name/],
    ['<Set var="" val="1"/>', /Set var "": must be a name/],
    ['<Set var="{{ n }}" val="1"/>', /Set var "\{\{ n \}\}": must be a name/],
    [`<Set var="${'a'.repeat(65)}" val="1"/>`, /must be a name/],
    ['<Set var="and" val="1"/>', /Set var "and": is a reserved word/],
    ['<Set var="GT" val="1"/>', /Set var "GT": is a reserved word/],
    ['<Set var="null" val="1"/>', /reserved word/],
    ['<Set var="Digits" val="1"/>', /Set var "Digits": is a call parameter and cannot be set/],
    ['<Set var="CallUUID" val="1"/>', /is a call parameter/],
    ['<Set var="x" val="1" expr="1"/>', /<Set> takes either val or expr, not both/],
    ['<Set var="x"/>', /<Set> needs a val \(text\) or an expr \(expression\) attribute/],
    ['<Set var="x" expr="1 +"/>', /Set expr "1 \+": expected a value at column 4/],
    ['<Set var="x" expr=""/>', /Set expr "": empty expression/],
    ['<Set var="x" expr="foo(1)"/>', /unknown function foo\(\)/],
    ['<Set var="x" val="{{ 1 + }}"/>', /Set val "\{\{ 1 \+ \}\}": in \{\{ 1 \+ \}\}: expected a value/],
    ['<Set var="x" val="a&#1;"/>', /attribute val of <Set>: &#1; is not an allowed character/],
    ['<Set var="x" val="a&#x7f;"/>', /Set val "a\\u007f": must not contain control characters/],
    ['<GetJSON url="http://a.test/"/>', /<GetJSON> needs a var attribute/],
    ['<GetJSON var="x"/>', /<GetJSON> needs a url attribute/],
    ['<GetJSON var="TransferFailureReason" url="http://a.test/"/>', /is a call parameter/],
    ['<GetJSON var="x" url="ftp://a.test/"/>', /GetJSON url "ftp:\/\/a.test\/": must be http or https URLs separated by commas; found "ftp:\/\/a.test\/" is not an http or https URL/],
    ['<GetJSON var="x" url="/relative"/>', /"\/relative" is not a URL/],
    ['<GetJSON var="x" url="http://a.test/a b"/>', /contains spaces or control characters/],
    ['<GetJSON var="x" url="http://a.test/,"/>', /found an empty URL/],
    ['<GetJSON var="x" url="http://a.test/" method="post"/>', /GetJSON method "post": must be one of POST, GET \(case-sensitive\)/],
    ['<GetJSON var="x" url="http://a.test/" method="PUT"/>', /must be one of POST, GET/],
  ])
})

t.test('expressions are checked at validation', async (t) => {
  table(t, [
    ['<If><Then/></If>', /<If> needs an expr attribute/],
    ['<If expr="a gt 1"><Then/></If>', /If expr "a gt 1": .*case-sensitive: write GT/],
    ['<If expr="\'abc"><Then/></If>', /unterminated string/],
    ['<Switch><Case val="1"/></Switch>', /<Switch> needs an expr attribute/],
    ['<Switch expr="(1"><Case val="1"/></Switch>', /Switch expr "\(1": expected \)/],
    ['<Cond><Clause expr="1 GT 2 GT 3"/></Cond>', /Clause expr "1 GT 2 GT 3": comparisons cannot be chained/],
    ["<If expr=\"constructor.constructor('return process')()\"><Then/></If>", /only the functions .* can be called/],
    ['<Speak>Hello {{ name</Speak>', /Speak text "Hello \{\{ name": \{\{ at character 7 has no closing \}\}/],
    ['<Speak>{{ x y }}</Speak>', /in \{\{ x y \}\}: expected the end of the expression/],
    ['<GetDigits timeout="{{ t"/>', /GetDigits timeout "\{\{ t": \{\{ at character 1 has no closing/],
  ])
})

t.test('value ranges and formats', async (t) => {
  table(t, [
    ['<Play loop="0">a.wav</Play>', /Play loop "0": must be a whole number from 1 to 5/],
    ['<Play loop="6">a.wav</Play>', /Play loop "6": must be a whole number from 1 to 5/],
    ['<Play loop="1.5">a.wav</Play>', /must be a whole number from 1 to 5/],
    ['<Play loop="-1">a.wav</Play>', /must be a whole number/],
    ['<Play loop="">a.wav</Play>', /must be a whole number/],
    ['<Play loop="two">a.wav</Play>', /must be a whole number/],
    ['<Play terminators="x">a.wav</Play>', /Play terminators "x": must be 0-16 DTMF keys/],
    ['<Play>../../etc/passwd</Play>', /Play text "..\/..\/etc\/passwd": must be an audio file path/],
    ['<Play>sounds/../secret.wav</Play>', /must be an audio file path/],
    ['<Play>${system(rm)}</Play>', /must be an audio file path/],
    ['<Play>a.wav,b.wav</Play>', /must be an audio file path/],
    ['<Play>my file.wav</Play>', /must be an audio file path/],
    ['<Play>file:///etc/passwd</Play>', /"file:\/\/\/etc\/passwd" is not an http or https URL/],
    ['<Play>shout://x.test/a.mp3</Play>', /is not an http or https URL/],
    ['<Play>tone_stream://%(100,0,440)</Play>', /must be an audio file path .* or an http or https URL/],
    ['<Speak loop="6">x</Speak>', /Speak loop "6": must be a whole number from 1 to 5/],
    ['<Speak language="ja_JP">x</Speak>', /Speak language "ja_JP": must be a language tag/],
    ['<Speak language="">x</Speak>', /must be a language tag/],
    ['<Speak voice="a b">x</Speak>', /Speak voice "a b": must be a voice name/],
    ['<Speak voice="{x}">x</Speak>', /must be a voice name/],
    ['<Wait length="-1"/>', /Wait length "-1": must be a number of seconds from 0 to 3600/],
    ['<Wait length="3601"/>', /must be a number of seconds from 0 to 3600/],
    ['<Wait length="1e3"/>', /must be a number of seconds/],
    ['<Wait length=".5"/>', /must be a number of seconds/],
    ['<Wait length="abc"/>', /must be a number of seconds/],
    ['<GetDigits timeout="0"/>', /GetDigits timeout "0": must be a whole number from 1 to 300/],
    ['<GetDigits timeout="301"/>', /must be a whole number from 1 to 300/],
    ['<GetDigits interdigitTimeout="0"/>', /GetDigits interdigitTimeout "0": must be a whole number from 1 to 300/],
    ['<GetDigits interdigitTimeout="1000"/>', /interdigitTimeout/],
    ['<GetDigits finishOnKey="##"/>', /GetDigits finishOnKey "##": must be one DTMF key \(0-9 \* # A-D\) or empty/],
    ['<GetDigits finishOnKey="x"/>', /finishOnKey "x": must be one DTMF key/],
    ['<GetDigits numDigits="0"/>', /GetDigits numDigits "0": must be a whole number from 1 to 99/],
    ['<GetDigits numDigits="100"/>', /must be a whole number from 1 to 99/],
    ['<GetDigits validDigits=""/>', /GetDigits validDigits "": must be 1-16 DTMF keys/],
    ['<GetDigits validDigits="12x"/>', /validDigits "12x": must be 1-16 DTMF keys/],
    ['<GetDigits maxTries="0"/>', /GetDigits maxTries "0": must be a whole number from 1 to 10/],
    ['<GetDigits maxTries="11"/>', /must be a whole number from 1 to 10/],
    ['<GetDigits playBeep="yes"/>', /GetDigits playBeep "yes": must be true or false/],
    ['<GetDigits playBeep="True"/>', /must be true or false/],
    ['<GetDigits action="ftp://a.test/"/>', /GetDigits action "ftp:\/\/a.test\/": must be http or https URLs/],
    ['<GetDigits action="next.xml"/>', /"next.xml" is not a URL/],
    ['<GetDigits action=""/>', /found an empty URL/],
    [`<GetDigits action="${Array.from({ length: 11 }, (_, i) => `http://h${i}.test/`).join(',')}"/>`, /more than 10 URLs/],
    ['<Redirect method="PUT">http://a.test/</Redirect>', /Redirect method "PUT": must be one of POST, GET/],
    ['<Redirect>javascript:alert(1)</Redirect>', /Redirect text "javascript:alert\(1\)": .* is not an http or https URL/],
    ['<Transfer answerTimeout="4">alice</Transfer>', /Transfer answerTimeout "4": must be a whole number from 5 to 180/],
    ['<Transfer answerTimeout="181">alice</Transfer>', /must be a whole number from 5 to 180/],
    ['<Transfer callingNumber="abc">alice</Transfer>', /Transfer callingNumber "abc": must be a phone number/],
    ['<Transfer callingNumber="1">alice</Transfer>', /must be a phone number/],
    ['<Transfer>alice bob</Transfer>', /Transfer text "alice bob": must be a user, group, extension, DID or PSTN number/],
    ['<Transfer>sofia/gateway/pstn/123</Transfer>', /must be a user, group/],
    ['<Transfer>{origination_caller_id_number=1}123</Transfer>', /must be a user, group/],
    ['<Transfer>sip:alice@example.test</Transfer>', /must be a user, group/],
    ['<Transfer failureAction="ftp://a.test/">alice</Transfer>', /Transfer failureAction "ftp:\/\/a.test\/": must be http or https URLs separated by commas or a Section name|must be http or https URLs separated by commas, or a Section name/],
    ['<Transfer failureAction="not a name">alice</Transfer>', /Transfer failureAction "not a name": must be http or https URLs separated by commas, or a Section name/],
    ['<Transfer failureAction="https://a.test/,ftp://b.test/">alice</Transfer>', /is not an http or https URL/],
    ['<Park timeout="0"/>', /Park timeout "0": must be a whole number from 1 to 86400/],
    ['<Park timeout="86401"/>', /must be a whole number from 1 to 86400/],
    ['<Hangup reason="normal"/>', /Hangup reason "normal": must be one of rejected, busy \(case-sensitive\)/],
    ['<Hangup reason="BUSY"/>', /must be one of rejected, busy/],
    ['<Hangup reason=""/>', /must be one of rejected, busy/],
  ])
})

t.test('values at the edges of their ranges are accepted', async (t) => {
  for (const inner of [
    '<Play loop="1">a.wav</Play>',
    '<Play loop=" 5 ">a.wav</Play>',
    '<Play terminators="0123456789*#ABCD">a.wav</Play>',
    '<Speak language="ja">x</Speak>',
    '<Speak language="zh-Hant-TW">x</Speak>',
    '<GetDigits timeout="1" interdigitTimeout="300" numDigits="1" maxTries="10" validDigits="D" finishOnKey="A"/>',
    '<Transfer answerTimeout="5" callingNumber="+81312345678">2001</Transfer>',
    '<Transfer>*67#</Transfer>',
    '<Transfer>bob.smith</Transfer>',
    '<Park timeout="1"/>',
    '<Park timeout="86400"/>',
    '<Wait length="0.001"/>',
    '<Redirect>http://user:pass@ivr.example.test:8080/a?b=%2C</Redirect>',
  ]) {
    t.equal(refused(inner), 'accepted', inner)
  }
})

t.test('templated values are kept for run time, not range-checked now', async (t) => {
  for (const inner of [
    '<Play loop="{{ n }}">{{ file }}</Play>',
    '<GetDigits timeout="{{ t }}" numDigits="{{ len(pin) }}" action="https://a.test/{{ CallUUID }}"/>',
    '<Transfer answerTimeout="{{ secs }}" callingNumber="{{ ani }}">{{ target }}</Transfer>',
    '<Hangup reason="{{ why }}"/>',
    '<Wait length="{{ w }}"/>',
  ]) {
    t.equal(refused(inner), 'accepted', inner)
  }
})

t.test('limits', async (t) => {
  const big = wrap(`<Speak>${'a'.repeat(4000)}</Speak>`.repeat(66)) // > 256 KiB
  t.match(reason(big), /^the document is \d+ bytes, more than the limit of 262144$/)
  t.match(reason(wrap('<Answer/>'), { maxBytes: 10 }), /more than the limit of 10/)
  t.equal(reason(wrap('<Answer/>'), { maxBytes: 20 }), 'accepted')

  // Depth: the root is level 1. Then/Else add a level each.
  const nestIf = (n: number) => '<If expr="1"><Then>'.repeat(n) + '</Then></If>'.repeat(n)
  t.equal(reason(wrap(nestIf(15))), 'accepted') // root 1 + 15 * 2 = 31 levels
  t.match(reason(wrap(nestIf(16))), /elements nested deeper than 32 levels/) // 33
  t.equal(reason(wrap(nestIf(1)), { maxDepth: 3 }), 'accepted')
  t.match(reason(wrap(nestIf(2)), { maxDepth: 3 }), /nested deeper than 3 levels/)
  t.match(reason(wrap('<Speak>x</Speak>'), { maxDepth: 1 }), /nested deeper than 1 levels/)
  // Very deep nesting is refused by the reader, before any tree walk.
  t.match(reason(`<IVR>${'<If expr="1"><Then>'.repeat(5000)}${'</Then></If>'.repeat(5000)}</IVR>`), /nested deeper than 32 levels/)

  // Elements: the root counts.
  t.equal(reason(wrap('<Answer/>'.repeat(1999))), 'accepted')
  t.match(reason(wrap('<Answer/>'.repeat(2000))), /\/IVR\/Answer\[2000\]\): more than 2000 elements/)
  t.match(reason(wrap('<Answer/><Answer/>'), { maxElements: 2 }), /more than 2 elements/)

  // Text and attribute values: bytes, not characters.
  t.equal(reason(wrap(`<Speak>${'a'.repeat(4096)}</Speak>`)), 'accepted')
  t.match(reason(wrap(`<Speak>${'a'.repeat(4097)}</Speak>`)), /the text of <Speak> is longer than 4096 bytes/)
  t.match(reason(wrap(`<Speak>${'あ'.repeat(1366)}</Speak>`)), /longer than 4096 bytes/)
  t.match(reason(wrap(`<Set var="x" val="${'a'.repeat(4097)}"/>`)), /attribute val of <Set> is longer than 4096 bytes/)
  t.match(reason(wrap('<Speak>abcdef</Speak>'), { maxTextBytes: 5 }), /longer than 5 bytes/)
})

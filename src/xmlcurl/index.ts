/** mod_xml_curl: the directory and dialplan documents FreeSWITCH fetches from the daemon. */
export { xmlCurlRouter, MAX_FORM_BYTES, type IvrHandoff, type XmlCurlDeps } from './router.js'
export { xmlCurlListener, type ListenerGuard, type XmlCurlListenerDeps } from './listener.js'
export { answerFetch } from './fetch.js'
export type { DialplanRecording } from './recording.js'
export { FetchForm } from './form.js'
export { NOT_FOUND } from './document.js'
export { huntPlan } from './routes.js'

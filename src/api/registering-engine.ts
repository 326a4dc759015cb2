/**
 * The origination engine as the API sees it (wired by src/daemon.ts): an `xml_url:` (or inline)
 * IVR destination's document is registered with the IVR runner before the leg is originated. The
 * dialplan hands the answered leg over under the request id, and the xml_curl router accepts that
 * key only if the runner holds it; the engine itself knows nothing of IVR documents.
 */
import type { OriginationEngine } from '../origination/plan.js'
import type { IvrSource } from '../ivr/source.js'

/** Where the documents of IVR destinations wait for their legs (the IVR runner). */
export interface IvrSourceRegistry {
  register(domain: string, key: string, source: IvrSource): void
}

export function registeringIvrSources(engine: OriginationEngine, ivr: IvrSourceRegistry): OriginationEngine {
  return {
    originate(plan, opts) {
      if (plan.destination.kind === 'ivr') ivr.register(plan.domain, plan.requestId, plan.destination.source)
      return engine.originate(plan, opts)
    },
  }
}

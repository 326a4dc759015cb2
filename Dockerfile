# The call origination daemon (cod). Build: docker build -t cod .
# Run beside FreeSWITCH: see docs/deploy.md ("The Docker way").

# ---- build: all dependencies, TypeScript compiled to dist/ ----
FROM node:20-bookworm AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

# ---- runtime: production dependencies and dist/ only ----
FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
# The shipped example configuration (simulator mode), so the image starts on its own;
# mount your own over it: -v /srv/cod:/etc/cod:ro
COPY conf /etc/cod
# Writable place for state such as callbacks.spool_file (e.g. /var/lib/cod/callbacks.jsonl).
RUN mkdir -p /var/lib/cod && chown node:node /var/lib/cod
VOLUME ["/var/lib/cod"]

# The image's own unprivileged user (uid 1000).
USER node
# The API listener only. The xml_curl listener (xml_curl.port, 8081) serves FreeSWITCH every SIP
# password: it is left out on purpose, so that `docker run -P` never publishes it; FreeSWITCH
# reaches it on loopback (host networking) or over a private network (docs/deploy.md "Listeners").
EXPOSE 8080
# /healthz answers 503 while the event socket link to FreeSWITCH is down. It must be reachable
# at 127.0.0.1:8080 inside the container (http.port 8080; http.host 127.0.0.1 with host
# networking, 0.0.0.0 on a bridge network).
HEALTHCHECK --interval=15s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:8080/healthz',{signal:AbortSignal.timeout(2500)}).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "--enable-source-maps", "dist/cli/cod.js", "start", "--config", "/etc/cod/daemon.yaml"]

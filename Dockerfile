# The call origination daemon (cod). Build: docker build -t cod .
# (podman: podman build --format docker -t cod . — the docker format keeps the HEALTHCHECK.)
# Run: docs/deploy.md "The Docker way". deploy/container/test-image.sh builds this file with
# podman and runs the commands that page documents (CI runs it).

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
# The image's own configuration, so that it starts on its own: conf/image/daemon.yaml (simulator
# mode, API listener on 0.0.0.0, journal in /var/lib/cod) and the example domain. Your own
# folder (daemon.yaml + domains/) replaces it, read-only: -v /srv/cod:/etc/cod:ro. The daemon
# writes nothing there.
COPY conf/image/daemon.yaml /etc/cod/daemon.yaml
COPY conf/domains /etc/cod/domains
# The daemon's state: the result journal (journal.dir /var/lib/cod/journal in the image's file;
# set the same in yours). A volume the image's user owns: -v cod-state:/var/lib/cod.
RUN mkdir -p /var/lib/cod && chown node:node /var/lib/cod
VOLUME ["/var/lib/cod"]

# The image's own unprivileged user (uid 1000).
USER node
# The daemon's file, read by the daemon (CMD) and by its health check alike: choose another one
# with -e COD_CONFIG=/etc/cod/other.yaml rather than on the command line.
ENV COD_CONFIG=/etc/cod/daemon.yaml
# The API listener only. The xml_curl listener (xml_curl.port, 8081) serves FreeSWITCH every SIP
# password: it is left out on purpose, so that `docker run -P` never publishes it; FreeSWITCH
# reaches it on loopback (host networking) or over a private network (docs/deploy.md "Listeners").
EXPOSE 8080
# `cod healthcheck` asks GET /healthz where $COD_CONFIG puts the API listener (http.host,
# http.port; a wildcard host on loopback): 503, so unhealthy, while the link to FreeSWITCH is down.
HEALTHCHECK --interval=15s --timeout=5s --start-period=10s --retries=3 \
  CMD ["node", "dist/cli/cod.js", "healthcheck"]
# exec: node is PID 1 and gets the SIGTERM of `docker stop` (a graceful stop, exit 0).
CMD ["sh", "-c", "exec node --enable-source-maps dist/cli/cod.js start --config \"$COD_CONFIG\""]

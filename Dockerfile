# Multi-stage image: build with the dev dependencies, run with production ones only, as a non-root user.
FROM node:24-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY migrations ./migrations
RUN npx tsc -p tsconfig.build.json

FROM node:24-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
# The embedded state DB's ready-made data folder (without it, a new one runs initdb: ~2 s, ~1 GB).
COPY src/state/embedded-template.tar.br ./src/state/
COPY bin ./bin
COPY config ./config
# The state and credentials folder, and the drop folder's mount point, writable by the worker.
RUN mkdir -p /app/data /app/drop && chown node:node /app/data /app/drop
USER node
# /healthz answers as soon as the process serves, whatever Redis, the state DB or the API do
# (/readyz says what is missing: docs/operations.md).
HEALTHCHECK --interval=15s --timeout=5s --retries=5 --start-period=20s \
  CMD node -e "fetch('http://127.0.0.1:' + (process.env.DASHBOARD_PORT || 3000) + '/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))" || exit 1
# SIGTERM stops the worker cleanly within queue.shutdownSeconds (25 s) + 10 s: give the container a
# longer grace period (docker-compose.yml: stop_grace_period 40s; docker stop -t 40).
ENTRYPOINT ["node", "bin/receivables-sync.js"]
CMD ["worker"]

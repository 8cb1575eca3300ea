# syntax=docker/dockerfile:1
# assistant-bridge: build with the full toolchain (better-sqlite3 compiles when no prebuilt
# binary fits), run on the slim image with only production dependencies.
#
# The base images, by tag. For builds that do not change under you, pin each by digest (a tag
# moves with every Node patch and Debian security update): look the digest up where the build
# runs, then pass both, e.g.
#   docker buildx imagetools inspect node:22-bookworm-slim   # "Digest: sha256:…"
#   docker build --build-arg NODE_RUN_IMAGE=node:22-bookworm-slim@sha256:<digest> \
#                --build-arg NODE_BUILD_IMAGE=node:22-bookworm@sha256:<digest> -t assistant-bridge .
# (compose: the same two names in .env or the shell). Update a pin the same way, on each Node
# release you take. No digest is written here: none could be verified where this file was made.
ARG NODE_BUILD_IMAGE=node:22-bookworm
ARG NODE_RUN_IMAGE=node:22-bookworm-slim

FROM ${NODE_BUILD_IMAGE} AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
# Dependencies first, so a source change does not reinstall them. --ignore-scripts skips the
# package's `prepare` (a build, the sources are not here yet); better-sqlite3's own install
# script is then run by the rebuild.
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund && npm rebuild better-sqlite3
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build && npm prune --omit=dev --ignore-scripts --no-audit --no-fund
# Only what runs goes on: of better-sqlite3's compile (17 MB when no prebuilt binary fits) the
# addon build/Release/better_sqlite3.node stays, its objects, SQLite and C++ sources go; then the
# empty folders the pruned dev dependencies leave behind.
RUN cd node_modules/better-sqlite3 \
 && find build -mindepth 1 -maxdepth 1 ! -name Release -exec rm -rf {} + \
 && find build/Release -mindepth 1 -maxdepth 1 ! -name better_sqlite3.node -exec rm -rf {} + \
 && rm -rf deps src binding.gyp \
 && cd /app && find node_modules -mindepth 1 -type d -empty -delete

FROM ${NODE_RUN_IMAGE} AS run
# tini as PID 1: forwards SIGTERM to node (graceful drain) and reaps zombies.
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
# MALLOC_ARENA_MAX and --max-semi-space-size: memory (docs/performance.md, "Memory"); the same
# as `npm start` and the package's command.
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATABASE_PATH=/data/bridge.db \
    MALLOC_ARENA_MAX=2
COPY --from=build --chown=root:root /app/package.json ./package.json
COPY --from=build --chown=root:root /app/node_modules ./node_modules
COPY --from=build --chown=root:root /app/dist ./dist
COPY --chown=root:root bin ./bin
COPY --chown=root:root migrations ./migrations
# The code stays root-owned and read-only to the process; only /data is writable.
RUN mkdir -p /data && chown node:node /data
VOLUME ["/data"]
USER node
EXPOSE 3000
# No curl in the slim image: node itself asks /healthz.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["tini", "--"]
CMD ["node", "--max-semi-space-size=4", "dist/cli.js", "start"]

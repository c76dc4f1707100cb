# The migrate image (docs/install.md "Container image"): the packed tool installed into /opt/migrate, run as a non-root
# user, the export and the state directory as volumes. Build from a checkout:
#   docker build --build-arg MIGRATE_BUILD_COMMIT=$(git rev-parse --short=12 HEAD) -t registry.example/migrate:1 .

# 1. Build and pack: dev dependencies, the TypeScript build and the bundle, then `npm pack` (what a server installs).
FROM node:20-bookworm-slim AS build
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts && npm rebuild better-sqlite3
COPY . .
ARG MIGRATE_BUILD_COMMIT=unknown
ENV MIGRATE_BUILD_COMMIT=${MIGRATE_BUILD_COMMIT}
RUN npm run build && mkdir /pkg && npm pack --ignore-scripts --pack-destination /pkg

# 2. Install the tarball as a server does (scripts/install-tarball.sh): runtime dependencies only.
FROM node:20-bookworm-slim AS install
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY --from=build /pkg/ /pkg/
COPY scripts/install-tarball.sh /usr/local/bin/install-tarball
RUN install-tarball /pkg/*.tgz /opt/migrate

# 3. The image: Node.js and the installed tool, nothing to build with.
FROM node:20-bookworm-slim
COPY --from=install /opt/migrate /opt/migrate
ENV PATH=/opt/migrate/bin:$PATH
RUN groupadd --system --gid 10001 migrate \
 && useradd --system --uid 10001 --gid migrate --home-dir /state --no-create-home migrate \
 && mkdir -p /export /state && chown migrate:migrate /state
USER 10001:10001
# The export is read-only to the tool (mount it so); the state directory holds the ledger (or give --ledger).
VOLUME ["/export", "/state"]
WORKDIR /state
ENTRYPOINT ["migrate"]
CMD ["--help"]

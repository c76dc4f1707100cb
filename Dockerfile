# The migrate image (docs/install.md "Container image"): the packed tool installed into /opt/migrate, run as a non-root
# user, the export and the state directory as volumes. Build from a checkout:
#   docker build --build-arg MIGRATE_BUILD_COMMIT=$(git rev-parse --short=12 HEAD) -t registry.example/migrate:1 .

# Every stage starts from the same Node.js 24 LTS image, pinned by its digest (the tag names the version it holds): a
# rebuild gets the same base. To move to a newer one, change the tag and the digest together (docs/install.md).

# 1. Build and pack: dev dependencies (their install scripts are not needed to build: no native module is loaded), then
#    `npm pack`, which builds (tsc and the bundle) and puts the lock in the tarball as npm-shrinkwrap.json.
FROM node:24.18.0-bookworm-slim@sha256:6f7b03f7c2c8e2e784dcf9295400527b9b1270fd37b7e9a7285cf83b6951452d AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts
COPY . .
ARG MIGRATE_BUILD_COMMIT=unknown
ENV MIGRATE_BUILD_COMMIT=${MIGRATE_BUILD_COMMIT}
RUN mkdir /pkg && npm pack --pack-destination /pkg

# 2. Install the tarball as a server does (scripts/install-tarball.sh): runtime dependencies only, the versions of the
#    tarball's npm-shrinkwrap.json; better-sqlite3 compiles its native module where it cannot download a prebuilt one.
FROM node:24.18.0-bookworm-slim@sha256:6f7b03f7c2c8e2e784dcf9295400527b9b1270fd37b7e9a7285cf83b6951452d AS install
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY --from=build /pkg/ /pkg/
COPY scripts/install-tarball.sh /usr/local/bin/install-tarball
RUN install-tarball /pkg/*.tgz /opt/migrate

# 3. The image: Node.js and the installed tool, nothing to build with.
FROM node:24.18.0-bookworm-slim@sha256:6f7b03f7c2c8e2e784dcf9295400527b9b1270fd37b7e9a7285cf83b6951452d
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

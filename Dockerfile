# syntax=docker/dockerfile:1
# AnswerDesk: one stateless node. Build:  docker build -t answerdesk .
# Every command below is one the test suite runs as well (test/packaging.test.ts checks this file).

ARG NODE_IMAGE=node:20-bookworm-slim

# ---- build: compilers for better-sqlite3 (built from source when no prebuilt binary fits), the
# full install, the widget bundle, then the dev dependencies dropped.
FROM ${NODE_IMAGE} AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build
RUN npm prune --omit=dev --no-audit --no-fund

# ---- runtime: Node and the app, no compilers, no npm cache, not root.
FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATABASE_URL=sqlite:/data/answerdesk.db \
    LOG_FORMAT=json
WORKDIR /app
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/bin ./bin
COPY --from=build /app/src ./src
COPY --from=build /app/dist ./dist
# The demo project's sample shop: its help articles and the orders its tracking action reads.
COPY --from=build /app/demo ./demo
# SQLite database and, unless ANSWERDESK_SECRET_KEY is set, the generated secret.key beside it. On
# PostgreSQL that key goes to ./data, which the node user could not create in /app: it links to the volume.
RUN mkdir -p /data && chown node:node /data && ln -s /data /app/data
VOLUME ["/data"]
USER node
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 CMD ["node", "bin/healthcheck.js"]
# SIGTERM drains the node (open answers finish, jobs go back to the queue) within
# ANSWERDESK_SHUTDOWN_TIMEOUT_MS (25 s): give `docker stop` / Kubernetes at least 30 s.
STOPSIGNAL SIGTERM
CMD ["node", "bin/answerdesk.js", "serve"]

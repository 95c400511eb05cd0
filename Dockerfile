# Fileshed server: OpenAPI tool server + MCP over HTTP on port 8765, storage in /data.
# dist/ is self-contained (the plugin and the server bundle), so no npm install happens here.
# Every user's commands run as that user's own uid (identity_separation=required, docs/deployment.md):
# the server runs as root WITHOUT root's powers: run it with cap_drop ALL and cap_add of exactly
# SETUID SETGID CHOWN FOWNER DAC_OVERRIDE KILL SYS_NICE, and no-new-privileges (docker-compose.example.yml).
# Without those capabilities commands are refused (never run as the server).
# python3 and its data stack serve shed_run_python, off unless an admin sets allow_python=true.
FROM node:26-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends bubblewrap zip unzip jq file sqlite3 git ca-certificates \
    poppler-utils imagemagick \
    python3 python3-numpy python3-pandas python3-matplotlib python3-openpyxl \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json ./
COPY dist/ ./dist/
# The storage base: the server's, passable (0711) so each user's commands reach their own zone only.
RUN mkdir -p /data && chmod 711 /data
USER root
VOLUME ["/data"]
EXPOSE 8765
ENV FILESHED_BASE=/data FILESHED_HOST=0.0.0.0 FILESHED_PORT=8765
# Listening on every interface, the server needs FILESHED_PUBLIC_URL: the address users' browsers
# reach it at (download links point there); it refuses to start without it (compose example).
# local mode is refused off loopback: choose the auth in the environment (compose example).
# In api-key mode without FILESHED_API_KEY, a key is generated at first start, printed once
# (`docker compose logs fileshed`) and kept in /data/fileshed.json.
ENV FILESHED_AUTH=openwebui-session,api-key
# Liveness without curl (not in slim images): node asks /healthz, which never touches storage.
HEALTHCHECK --interval=30s --timeout=5s --start-period=15s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.FILESHED_PORT||8765)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "dist/cli.mjs", "serve", "--valve=identity_separation=required"]

# Fileshed server: OpenAPI tool server + MCP over HTTP on port 8765, storage in /data.
# dist/ is self-contained (the plugin and the server bundle), so no npm install happens here.
FROM node:26-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends bubblewrap zip unzip jq file sqlite3 git ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json ./
COPY dist/ ./dist/
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8765
ENV FILESHED_BASE=/data FILESHED_HOST=0.0.0.0 FILESHED_PORT=8765
# local mode is refused off loopback: choose the auth in the environment (compose example).
ENV FILESHED_AUTH=openwebui-session,api-key
CMD ["node", "dist/cli.mjs", "serve"]

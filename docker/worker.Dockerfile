# gymflow worker images: the built CLI and workers (Node 20); the GPU worker's adds the Python trainer (torch,
# transformers, peft) in /opt/gymflow/.venv. One recipe for the workers of docker-compose.yml:
#   CPU worker (target cpu: Node only; collection, reward, export, evaluation act through onnxruntime-node):
#     docker build -f docker/worker.Dockerfile --target cpu -t gymflow/worker:latest .
#   GPU worker (target gpu, the default: the CPU image plus the trainer):
#     docker build -f docker/worker.Dockerfile --build-arg TORCH_INDEX_URL=https://download.pytorch.org/whl/cu128 -t gymflow/worker-gpu:latest .
# The CUDA runtime comes with torch's CUDA wheels; the host needs the NVIDIA driver and container toolkit only.
# Run one with `node dist/workers/cpu.js` or `node dist/workers/gpu.js` (compose does); every address and
# credential comes from the environment (docs/operations.md, "Running with docker compose").
# Without a registry that serves node:20-bookworm-slim, scripts/build-node-image.sh builds a base to pass as
# --build-arg NODE_IMAGE=… (tests/worker-image.test.ts builds the CPU image that way).
ARG NODE_IMAGE=node:20-bookworm-slim

# ---- build: the TypeScript build (dist/) and the WebAssembly token index --------------------------------------
FROM ${NODE_IMAGE} AS build
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends clang lld ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /opt/gymflow
ENV ONNXRUNTIME_NODE_INSTALL=skip
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN bash scripts/build.sh && bash scripts/build-wasm.sh build/wasm

# ---- cpu: the CPU worker (and the workflows' worker): Node only -----------------------------------------------
FROM ${NODE_IMAGE} AS cpu
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends git ca-certificates tini \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /opt/gymflow
ENV ONNXRUNTIME_NODE_INSTALL=skip NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /opt/gymflow/dist dist
COPY --from=build /opt/gymflow/build build
COPY bin bin
COPY docker/sandbox.Dockerfile docker/sandbox.Dockerfile
COPY scripts/build-sandbox-image.sh scripts/build-sandbox-image.sh
COPY scripts/lib scripts/lib
RUN groupadd -r gymflow && useradd -r -g gymflow -d /opt/gymflow gymflow \
 && mkdir -p /data && chown gymflow:gymflow /data
USER gymflow
ENV GYMFLOW_STORE=/data/store
ENTRYPOINT ["tini", "--"]
CMD ["node", "dist/workers/cpu.js"]

# ---- gpu: the GPU worker: the CPU image plus the Python trainer ---------------------------------------------
FROM cpu AS gpu
ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu
USER root
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 python3-venv \
 && rm -rf /var/lib/apt/lists/*
ENV GYMFLOW_PYTHON=/opt/gymflow/.venv/bin/python
COPY trainer/requirements.txt trainer/requirements.txt
RUN python3 -m venv .venv \
 && .venv/bin/pip install --no-cache-dir "torch==$(sed -n 's/^torch==//p' trainer/requirements.txt)" --index-url "${TORCH_INDEX_URL}" \
 && .venv/bin/pip install --no-cache-dir -r trainer/requirements.txt
COPY trainer trainer
RUN .venv/bin/pip install --no-cache-dir --no-deps -e trainer
USER gymflow
CMD ["node", "dist/workers/gpu.js"]

# gymflow sandbox base image, for users with a registry (`docker build -f docker/sandbox.Dockerfile -t gymflow/sandbox:latest .`).
# Offline, scripts/build-sandbox-image.sh builds the same image from debootstrap (`gymflow sandbox build-image`).
# Keep the package list in step with PACKAGES in that script.
FROM debian:bookworm-slim
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 python-is-python3 python3-pytest git patch procps \
 && groupadd -g 1000 agent && useradd -u 1000 -g 1000 -m -d /home/agent -s /bin/bash agent \
 && mkdir -p /work && chown agent:agent /work \
 && git config --system user.name "gymflow agent" \
 && git config --system user.email "agent@gymflow.invalid" \
 && git config --system safe.directory '*' \
 && git config --system init.defaultBranch main \
 && apt-get clean && rm -rf /var/lib/apt/lists/*
ENV PYTHONDONTWRITEBYTECODE=1 LANG=C.UTF-8
USER agent
WORKDIR /work
CMD ["sleep", "infinity"]

# syntax=docker/dockerfile:1
# The operator image: `ballastd` from the project's wheel on a slim Python, as an unprivileged user.
#   docker build -t ballast:dev .
# Stage 1 builds the wheels (the project and its dependencies); stage 2 installs them offline and keeps no
# compiler, no pip cache and no wheel files. The chart's Deployment and hook Jobs run this ENTRYPOINT with
# arguments (`apply-crds`, `uninstall`); tests/packaging/test_image_entrypoint.py runs it from the same wheel.
ARG PYTHON_VERSION=3.11

FROM python:${PYTHON_VERSION}-slim AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY pyproject.toml README.md ./
# ballast/ holds relative symlinks to the four source folders; copied side by side they resolve as in the repo.
COPY ballast ballast
COPY api api
COPY controllers controllers
COPY internal internal
COPY webhook webhook
RUN pip wheel --wheel-dir /wheels '.[operator,otel]'

FROM python:${PYTHON_VERSION}-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
RUN --mount=type=bind,from=build,source=/wheels,target=/wheels \
    pip install --no-index --find-links=/wheels 'ballast[operator,otel]' \
    && groupadd --system --gid 65532 ballast \
    && useradd --system --uid 65532 --gid 65532 --no-create-home --home-dir /nonexistent \
       --shell /usr/sbin/nologin ballast
# Numeric, so the kubelet can check runAsNonRoot; the chart and config/manager run as the same 65532.
USER 65532:65532
# webhook, health probes, metrics (when enabled)
EXPOSE 9443 8081 8080
ENTRYPOINT ["ballastd"]

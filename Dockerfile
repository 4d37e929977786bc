# syntax=docker/dockerfile:1
# The pixelmill server image: the API (`serve`, the default command), the Celery worker
# (`worker`), migrations (`migrate`) and the admin commands, from one image.
#
#   docker build -t pixelmill .                 (or: podman build -t pixelmill .)
#   docker build --build-arg BASE_IMAGE=python:3.12-slim-bookworm -t pixelmill .
#   docker build --build-arg ONNXRUNTIME=gpu -t pixelmill:gpu .   (ONNX Runtime on CUDA)
#
# The install is the one scripts/bootstrap runs (tests/deploy/test_image.py keeps them in step):
# the Debian packages of requirements/apt.txt, then requirements/runtime.txt, then
# requirements/nodeps.txt with --no-deps, then pixelmill itself with --no-deps (here a regular
# install instead of the editable one a checkout gets). Every Python package is a wheel, so the
# build stage needs no compiler. docs/deploy.md runs it with deploy/compose.yaml.

# Any Debian-based CPython 3.11+ image (scripts/bootstrap refuses older Pythons).
ARG BASE_IMAGE=python:3.11-slim-bookworm

# ---- build: a virtual environment under /opt/pixelmill ------------------------------------
FROM ${BASE_IMAGE} AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    PYTHONDONTWRITEBYTECODE=1
RUN python3 -m venv /opt/pixelmill \
 && /opt/pixelmill/bin/python -m pip install --upgrade pip
WORKDIR /src
# The requirement files first: this layer is rebuilt only when a pin changes.
COPY requirements/runtime.txt requirements/nodeps.txt requirements/
RUN /opt/pixelmill/bin/pip install -r requirements/runtime.txt \
 && /opt/pixelmill/bin/pip install --no-deps -r requirements/nodeps.txt
# The GPU variant (docs/models.md): `--build-arg ONNXRUNTIME=gpu` swaps the CPU onnxruntime for
# onnxruntime-gpu with NVIDIA's CUDA and cuDNN wheels (requirements/gpu.txt); ONNX sessions then
# run on CUDA (PIXELMILL_ONNX_PROVIDERS' default) on a host with the NVIDIA container toolkit
# (`docker run --gpus all`, or deploy/compose.yaml's gpu profile).
ARG ONNXRUNTIME=cpu
COPY requirements/gpu.txt requirements/
RUN if [ "$ONNXRUNTIME" = "gpu" ]; then \
      /opt/pixelmill/bin/pip uninstall --yes onnxruntime \
      && /opt/pixelmill/bin/pip install -r requirements/gpu.txt; \
    fi
COPY pyproject.toml README.md ./
COPY src ./src
RUN /opt/pixelmill/bin/pip install --no-deps .
# The light client (`pixelmill-client`, the README's CLI), as scripts/bootstrap installs it.
COPY clients/python/pyproject.toml clients/python/README.md ./clients/python/
COPY clients/python/src ./clients/python/src
RUN /opt/pixelmill/bin/pip install ./clients/python \
 && /opt/pixelmill/bin/python -m compileall -q /opt/pixelmill/lib

# ---- runtime ------------------------------------------------------------------------------
FROM ${BASE_IMAGE}
# What the engines run or link against (espeak-ng for the voice, the DejaVu fonts for subtitles
# and ads): requirements/apt.txt, the list scripts/bootstrap installs.
COPY requirements/apt.txt /tmp/apt.txt
RUN apt-get update \
 && sed -e 's/#.*//' /tmp/apt.txt | xargs -r apt-get install -y --no-install-recommends \
 && rm -rf /var/lib/apt/lists/* /tmp/apt.txt
# A user of its own: nothing runs as root. Its home is the data directory (mount a volume there
# for PIXELMILL_STORAGE=local; with s3, as in deploy/compose.yaml, nothing there outlives a run).
RUN groupadd --system --gid 10001 pixelmill \
 && useradd --system --uid 10001 --gid pixelmill --home-dir /var/lib/pixelmill \
      --create-home --shell /usr/sbin/nologin pixelmill
COPY --from=build /opt/pixelmill /opt/pixelmill
# numba keeps the parts step's compiled loops (engines/background/regions.py) in its cache: the
# first process to cut out compiles them (~2-4 s), the others read them (~0.3 s).
ENV PATH=/opt/pixelmill/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PIXELMILL_DATA_DIR=/var/lib/pixelmill \
    NUMBA_CACHE_DIR=/var/lib/pixelmill/.cache/numba
USER pixelmill
WORKDIR /var/lib/pixelmill
# Where compose's gpu profile mounts the models volume (PIXELMILL_MODELS_DIR): made here so the
# volume starts out owned by this user and `pixelmill models pull` can write to it.
RUN mkdir -p /var/lib/pixelmill/models
EXPOSE 8000
# Liveness of the API (GET /healthz answers {"status": "ok"} while the process is up). The
# worker has no HTTP port: deploy/compose.yaml and deploy/kubernetes/ check it with
# `pixelmill worker-health` instead (a ping through Redis, answered by the worker).
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD ["python3", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=4)"]
ENTRYPOINT ["pixelmill"]
CMD ["serve", "--host", "0.0.0.0", "--port", "8000"]

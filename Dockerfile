# One image for every rollouts-ui process (web, watcher, worker, scheduler, migrations, demo simulator);
# the command picks the role. Two stages: the build stage compiles wheels and the domain (mypyc, gcc), the
# runtime stage has no compiler, runs as an unprivileged user (uid 10001) and carries the collected static
# files.
FROM python:3.11-slim AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
RUN apt-get update && apt-get install -y --no-install-recommends gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY pyproject.toml README.md ./
COPY rollouts_ui ./rollouts_ui
COPY dashboard ./dashboard
COPY kubesim ./kubesim
COPY scripts/compile.py ./scripts/compile.py
RUN pip wheel --wheel-dir /wheels . \
    && pip install --find-links /wheels '.[compile]' \
    && python scripts/compile.py

FROM python:3.11-slim
# DOMAIN_COMPILED=require: a process whose compiled domain does not match its sources refuses to start.
ENV PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
    DJANGO_SETTINGS_MODULE=rollouts_ui.settings LOG_FORMAT=json DOMAIN_COMPILED=require
RUN groupadd --system --gid 10001 rollouts \
    && useradd --system --uid 10001 --gid 10001 --home-dir /app --shell /usr/sbin/nologin rollouts
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir --no-index --find-links /wheels rollouts-ui && rm -rf /wheels
WORKDIR /app
COPY manage.py ./
COPY templates ./templates
COPY static ./static
# The package is installed; the sources beside manage.py are what Django's BASE_DIR points at.
COPY rollouts_ui ./rollouts_ui
COPY dashboard ./dashboard
COPY kubesim ./kubesim
COPY --from=build /src/compiled ./compiled
# Static files collected at build time (the settings need no secrets for it); /kubesim holds the demo
# simulator's kubeconfig (a named volume copies this directory's owner). The sources are compiled here:
# with PYTHONDONTWRITEBYTECODE (and a read-only user) every process start would compile them again,
# about 0.4 s of each watcher's and web server's start-up (docs/benchmarks.md).
RUN python -m compileall -q rollouts_ui dashboard kubesim \
    && python manage.py collectstatic --noinput \
    && mkdir -p /kubesim \
    && chown -R rollouts:rollouts /kubesim
USER 10001:10001
EXPOSE 8000 9100
CMD ["uvicorn", "rollouts_ui.asgi:application", "--host", "0.0.0.0", "--port", "8000", "--no-access-log"]

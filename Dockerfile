# Multi-stage image for every rollouts-ui process (web, watcher, worker); the command picks the role.
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY rollouts_ui ./rollouts_ui
COPY dashboard ./dashboard
COPY kubesim ./kubesim
RUN pip install --no-cache-dir --prefix=/install .

FROM python:3.11-slim
ENV PYTHONUNBUFFERED=1 DJANGO_SETTINGS_MODULE=rollouts_ui.settings
RUN useradd --system --uid 10001 --home-dir /app rollouts
WORKDIR /app
COPY --from=build /install /usr/local
COPY manage.py ./
COPY rollouts_ui ./rollouts_ui
COPY dashboard ./dashboard
COPY kubesim ./kubesim
COPY templates ./templates
COPY static ./static
RUN python manage.py collectstatic --noinput && chown -R rollouts /app
USER 10001
EXPOSE 8000
CMD ["uvicorn", "rollouts_ui.asgi:application", "--host", "0.0.0.0", "--port", "8000"]

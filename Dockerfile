# synthgpt server image: slim, runs as a non-root user, listens on 0.0.0.0:8000. The one image for a single
# container (compose.yaml) and for replicas sharing state in Redis (deploy/compose.yaml, deploy/k8s/): it
# carries the Redis client (the `redis` extra), so `--state redis://…` works in it.
#   docker build -t synthgpt .
#   docker run --rm -p 8000:8000 synthgpt
#   docker run --rm -p 8000:8000 -v "$PWD/rules:/rules:ro" -e SYNTHGPT_RULE_FILES=/rules/rules.yaml synthgpt
# Every `synthgpt serve` flag is also a SYNTHGPT_* variable (--seed: SYNTHGPT_SEED, --workers:
# SYNTHGPT_WORKERS, --log-format: SYNTHGPT_LOG_FORMAT, the admin token: SYNTHGPT_ADMIN_TOKEN, …).

FROM python:3.12-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY synthgpt ./synthgpt
RUN pip install --no-cache-dir --disable-pip-version-check build \
 && python -m build --wheel --outdir /dist

FROM python:3.12-slim
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    SYNTHGPT_PORT=8000 \
    SYNTHGPT_LOG_FORMAT=json
COPY --from=build /dist/ /tmp/dist/
RUN pip install --no-cache-dir --disable-pip-version-check "$(ls /tmp/dist/*.whl)[redis]" \
 && rm -rf /tmp/dist \
 && useradd --system --uid 10001 --user-group --no-create-home --shell /usr/sbin/nologin synthgpt
USER synthgpt:synthgpt
WORKDIR /tmp
EXPOSE 8000
HEALTHCHECK --interval=10s --timeout=3s --retries=3 \
  CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/healthz' % os.environ.get('SYNTHGPT_PORT', '8000'), timeout=2)"]
ENTRYPOINT ["synthgpt"]
CMD ["serve", "--host", "0.0.0.0"]

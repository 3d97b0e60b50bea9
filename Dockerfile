FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
COPY pyproject.toml README.md ./
COPY annotate ./annotate
RUN pip install --no-cache-dir .
COPY . .
RUN DEBUG=0 SECRET_KEY=collectstatic-only python manage.py collectstatic --noinput
USER nobody
EXPOSE 8000
CMD ["gunicorn", "annotate.wsgi"]

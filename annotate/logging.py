"""Structured logs: one JSON object per line, ready for a log collector."""

import json
import logging
from datetime import UTC, datetime


class JSONFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key in ("status_code", "request_id"):
            if hasattr(record, key):
                entry[key] = getattr(record, key)
        request = getattr(record, "request", None)
        if request is not None and hasattr(request, "path"):
            entry["path"] = request.path
            entry["method"] = request.method
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False)

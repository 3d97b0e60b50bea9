import re
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Completion:
    text: str
    prompt_tokens: int | None
    completion_tokens: int | None
    latency_ms: int
    raw: dict = field(default_factory=dict)


class ProviderError(Exception):
    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class RetryableError(ProviderError):
    """Worth trying again: rate limited, server error, timeout, connection refused."""

    def __init__(self, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


class PermanentError(ProviderError):
    """Trying again will not help: bad request, malformed or empty answer."""


_LABEL = re.compile(
    r"^\s*(?:[-*•]\s*)?(?:\*\*|__)?\s*(?:the\s+)?(?:moral(?:\s+of\s+the\s+(?:story|fable))?"
    r"|answer|lesson)\s*(?:\*\*|__)?\s*[:\-–—]\s*(?:\*\*|__)?\s*",
    re.IGNORECASE,
)
_QUOTES = "\"'“”‘’«»"


def clean_moral(text: str) -> str:
    """The moral alone: no label ("Moral:"), quotes, markdown or extra lines."""
    for line in (text or "").splitlines():
        line = _LABEL.sub("", line.strip())
        line = re.sub(r"(\*\*|__|\*|_)(.+?)\1", r"\2", line).strip()
        line = line.lstrip("-*• ").strip()
        while len(line) >= 2 and line[0] in _QUOTES and line[-1] in _QUOTES:
            line = line[1:-1].strip()
        line = line.strip(_QUOTES).strip() if line.count('"') == 1 else line
        line = re.sub(r"\s+", " ", line)
        if line and not _LABEL.fullmatch(line + ":"):
            return line
    return ""

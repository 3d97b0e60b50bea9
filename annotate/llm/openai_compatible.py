"""One chat-completions request to an OpenAI-compatible server (OpenAI, OpenRouter, vLLM,
Ollama's /v1, llama.cpp server). Retries belong to the caller (the Celery task)."""

import email.utils
import json
import os
import threading
import time

import httpx

from annotate.llm.base import Completion, PermanentError, RetryableError, clean_moral


def parse_retry_after(value: str | None) -> float | None:
    """Retry-After as seconds, or as an HTTP date."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


_clients: dict[int, httpx.Client] = {}
_clients_lock = threading.Lock()


def shared_client() -> httpx.Client:
    """One pooled HTTP client per process (created after a fork, shared by its threads).

    A fresh client per request (httpx.post) builds a new TLS context and connection each
    time: that CPU, not the provider, limited generation to ~0.3 of the ideal rate."""
    pid = os.getpid()
    client = _clients.get(pid)
    if client is None:
        with _clients_lock:
            client = _clients.get(pid)
            if client is None:
                limits = httpx.Limits(max_connections=64, max_keepalive_connections=32)
                client = _clients[pid] = httpx.Client(limits=limits)
    return client


class OpenAICompatibleProvider:
    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | None,
        temperature: float = 0.0,
        max_tokens: int = 100,
        timeout: float = 30.0,
        client: httpx.Client | None = None,
    ):
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model, self.api_key = model, api_key
        self.temperature, self.max_tokens, self.timeout = temperature, max_tokens, timeout
        self.client = client

    def complete(self, messages: list[dict]) -> Completion:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        body = {
            "model": self.model,
            "messages": messages,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }
        started = time.perf_counter()
        try:
            if self.client is not None:
                response = self.client.post(
                    self.url, json=body, headers=headers, timeout=self.timeout
                )
            else:
                response = shared_client().post(
                    self.url, json=body, headers=headers, timeout=self.timeout
                )
        except httpx.TimeoutException:
            raise RetryableError(f"no answer from {self.url} within {self.timeout:g} s") from None
        except httpx.TransportError as exc:
            raise RetryableError(f"cannot reach {self.url}: {exc}") from None
        latency_ms = round((time.perf_counter() - started) * 1000)
        if response.status_code == 429 or response.status_code >= 500:
            raise RetryableError(
                f"HTTP {response.status_code} from {self.url}: {response.text[:200]}",
                retry_after=parse_retry_after(response.headers.get("Retry-After")),
            )
        if response.status_code >= 400:
            raise PermanentError(
                f"HTTP {response.status_code} from {self.url}: {response.text[:200]}"
            )
        try:
            raw = response.json()
        except json.JSONDecodeError as exc:
            raise PermanentError(f"model returned malformed JSON: {exc}") from None
        try:
            content = raw["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise PermanentError("model answer has no choices[0].message.content") from None
        text = clean_moral(content if isinstance(content, str) else "")
        if not text:
            raise PermanentError("model returned an empty moral")
        usage = raw.get("usage") or {}
        return Completion(
            text=text,
            prompt_tokens=usage.get("prompt_tokens"),
            completion_tokens=usage.get("completion_tokens"),
            latency_ms=latency_ms,
            raw=raw,
        )

"""The provider against a real HTTP server (tests/fake_openai.py), not mocks."""

import email.utils
import socket
import time

import pytest

from annotate.llm.base import PermanentError, RetryableError, clean_moral
from annotate.llm.openai_compatible import OpenAICompatibleProvider
from tests.fake_openai import FakeOpenAI

MESSAGES = [
    {"role": "system", "content": "s"},
    {"role": "user", "content": "Story: A fox met a crow on a branch."},
]


@pytest.fixture
def server():
    with FakeOpenAI() as s:
        yield s


def provider(server, **kw):
    return OpenAICompatibleProvider(
        base_url=server.url + "/", model="m-1", api_key=kw.pop("api_key", "sk-test"), **kw
    )


def test_ok_with_tokens_latency_and_cleaning(server):
    server.script.append(("ok", 'Moral: "Flattery costs the flattered."'))
    server.latency = 0.05
    done = provider(server).complete(MESSAGES)
    assert done.text == "Flattery costs the flattered."
    assert (done.prompt_tokens, done.completion_tokens) == (42, 9)
    assert done.latency_ms >= 50
    request = server.requests[0]
    assert request["path"] == "/v1/chat/completions"
    assert request["json"]["model"] == "m-1" and request["json"]["temperature"] == 0.0
    assert request["headers"]["Authorization"] == "Bearer sk-test"


def test_no_key_no_authorization_header(server):
    provider(server, api_key=None).complete(MESSAGES)
    assert "Authorization" not in server.requests[0]["headers"]


def test_429_is_retryable_with_retry_after(server):
    server.script.append(("status", 429, {"Retry-After": "1"}))
    with pytest.raises(RetryableError) as info:
        provider(server).complete(MESSAGES)
    assert info.value.retry_after == 1.0 and "HTTP 429" in info.value.message


def test_retry_after_as_http_date(server):
    when = email.utils.formatdate(time.time() + 30, usegmt=True)
    server.script.append(("status", 503, {"Retry-After": when}))
    with pytest.raises(RetryableError) as info:
        provider(server).complete(MESSAGES)
    assert 25 <= info.value.retry_after <= 31


def test_500_is_retryable(server):
    server.script.append(("status", 500))
    with pytest.raises(RetryableError, match="HTTP 500"):
        provider(server).complete(MESSAGES)


def test_timeout_is_retryable(server):
    server.script.append(("hang", 2))
    with pytest.raises(RetryableError, match="within 0.3 s"):
        provider(server, timeout=0.3).complete(MESSAGES)


def test_malformed_json_is_permanent(server):
    server.script.append(("malformed",))
    with pytest.raises(PermanentError, match="malformed JSON"):
        provider(server).complete(MESSAGES)


def test_empty_content_is_permanent(server):
    server.script.append(("empty",))
    with pytest.raises(PermanentError, match="empty moral"):
        provider(server).complete(MESSAGES)


def test_400_is_permanent(server):
    server.script.append(("status", 400))
    with pytest.raises(PermanentError, match="HTTP 400"):
        provider(server).complete(MESSAGES)


def test_connection_refused_is_retryable():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    p = OpenAICompatibleProvider(
        base_url=f"http://127.0.0.1:{port}/v1", model="m", api_key=None, timeout=2
    )
    with pytest.raises(RetryableError, match="cannot reach"):
        p.complete(MESSAGES)


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("Slow and steady wins the race.", "Slow and steady wins the race."),
        ('Moral: "Look before you leap."', "Look before you leap."),
        ("**Moral:** Pride comes before a fall.", "Pride comes before a fall."),
        ("The moral of the story: Be content.", "Be content."),
        ("“Kindness is never wasted.”", "Kindness is never wasted."),
        ("Answer: - Honesty pays.", "Honesty pays."),
        ("\n\nMoral:\nGreed loses all.\nExplanation: the dog…", "Greed loses all."),
        ("  many   spaces  here ", "many spaces here"),
        ("Moral:", ""),
        ('""', ""),
    ],
)
def test_clean_moral(raw, clean):
    assert clean_moral(raw) == clean

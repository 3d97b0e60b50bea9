"""Request timing for browsers' developer tools and load tests."""

import time


class ServerTimingMiddleware:
    """Adds `Server-Timing: app;dur=<ms>`: the time Django spent on the request.

    It excludes the time a request waited for a free worker, which is what a client
    measures on top; the routing benchmark reports both (bench/routing_load.py).
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        started = time.perf_counter()
        response = self.get_response(request)
        duration = (time.perf_counter() - started) * 1000
        timing = f"app;dur={duration:.1f}"
        existing = response.get("Server-Timing")
        response["Server-Timing"] = f"{existing}, {timing}" if existing else timing
        return response

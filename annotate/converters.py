"""URL converters. `<id:…>` is a database id: digits that fit a 64-bit integer column.

Django's `<int:…>` accepts any number of digits, and a 20-digit id reached SQLite as an
OverflowError (a 500, found by the API fuzzer); with at most 18 digits it is a plain 404.
"""

from django.urls import register_converter


class IdConverter:
    regex = "[0-9]{1,18}"

    def to_python(self, value: str) -> int:
        return int(value)

    def to_url(self, value) -> str:
        return str(int(value))


register_converter(IdConverter, "id")

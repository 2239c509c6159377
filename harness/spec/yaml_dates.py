"""A value YAML 1.1 reads as a date (`seed: 2024-01-01`, `model: 2024-01-01`) is a date to every check, as before, but
shows as the file writes it: a message says `2024-01-01 is not an integer`, never `datetime.date(2024, 1, 1)`."""

from __future__ import annotations

import datetime as dt
from typing import Any

import yaml


class WrittenDate(dt.date):
    """A date that repr() and str() give as written."""

    written: str

    def __repr__(self) -> str:
        return self.written

    __str__ = __repr__


class WrittenDateTime(dt.datetime):
    """A date with its time (`2024-01-01 10:00:00`) that repr() and str() give as written."""

    written: str

    def __repr__(self) -> str:
        return self.written

    __str__ = __repr__


def construct_written_date(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> Any:
    """PyYAML's timestamp, kept a date (or a date with its time), with the text it was read from."""
    value = yaml.constructor.SafeConstructor.construct_yaml_timestamp(loader, node)
    if isinstance(value, dt.datetime):
        written: WrittenDate | WrittenDateTime = WrittenDateTime(
            value.year, value.month, value.day, value.hour, value.minute, value.second, value.microsecond,
            value.tzinfo)
    else:
        written = WrittenDate(value.year, value.month, value.day)
    written.written = node.value
    return written

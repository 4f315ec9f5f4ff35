"""The reads' pure parts: an inclusive ``to`` as the read's exclusive bound, JSON that has no NaN."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import numpy as np

from era5etl.serve.reads import encode_json, exclusive_end


def test_inclusive_to_becomes_the_next_hour() -> None:
    assert exclusive_end(None) is None
    assert exclusive_end(datetime(2024, 3, 31, 23, tzinfo=UTC)) == datetime(2024, 4, 1, tzinfo=UTC)
    # 12:30 holds the 12:00 hour, not the 13:00 one
    assert exclusive_end(datetime(2024, 3, 31, 12, 30, tzinfo=UTC)) == datetime(2024, 3, 31, 13, tzinfo=UTC)


def test_json_without_nan() -> None:
    assert json.loads(encode_json({"values": [1.5, None]})) == {"values": [1.5, None]}
    data = {"values": [1.5, float("nan"), float("inf")], "n": np.int64(3), "a": np.array([np.float32(2.5)])}
    assert json.loads(encode_json(data)) == {"values": [1.5, None, None], "n": 3, "a": [2.5]}

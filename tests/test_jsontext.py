import tracemalloc

import orjson

from dashboard.jsontext import exact


def test_kept_json_takes_about_its_own_length_in_memory() -> None:
    row = {"key": "prod/shop/checkout", "status": "Paused", "step": "1/4", "weights": [10, 90]}
    tracemalloc.start()
    try:
        kept = [exact(orjson.dumps(row | {"n": n})) for n in range(1000)]
        used = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert orjson.loads(kept[7]) == row | {"n": 7}
    assert used < 1000 * (len(kept[0]) + 200)  # not the kilobytes orjson's own buffer holds

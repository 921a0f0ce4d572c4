from dicts import merge

def test_values():
    assert merge({"x": 1}, {"x": 2, "y": 3}) == {"x": 2, "y": 3}

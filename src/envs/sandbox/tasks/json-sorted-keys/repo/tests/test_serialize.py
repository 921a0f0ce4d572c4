import json
from serialize import to_json

def test_roundtrip():
    assert json.loads(to_json({"a": [1, 2]})) == {"a": [1, 2]}

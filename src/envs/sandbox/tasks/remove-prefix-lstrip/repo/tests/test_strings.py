from strings import remove_prefix

def test_basic():
    assert remove_prefix("foobar", "foo") == "bar"

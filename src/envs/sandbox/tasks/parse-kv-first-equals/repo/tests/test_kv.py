from kv import parse_line

def test_simple():
    assert parse_line("a = 1") == ("a", "1")

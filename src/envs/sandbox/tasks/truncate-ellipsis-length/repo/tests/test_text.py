from text import truncate

def test_short():
    assert truncate("abc", 5) == "abc"

from words import word_counts

def test_simple():
    assert word_counts("a b a") == {"a": 2, "b": 1}

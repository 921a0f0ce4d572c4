from roman import to_roman

def test_additive():
    assert to_roman(2026) == "MMXXVI"

from bounds import clamp

def test_type():
    assert isinstance(clamp(1, 0, 2), int)

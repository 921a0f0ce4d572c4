from arith import safe_divide

def test_normal():
    assert safe_divide(6, 3) == 2

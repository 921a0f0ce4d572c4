from mathx import sum_to

def test_zero():
    assert sum_to(0) == 0

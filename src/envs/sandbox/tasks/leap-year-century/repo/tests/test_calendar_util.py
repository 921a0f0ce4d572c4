from calendar_util import is_leap

def test_ordinary():
    assert is_leap(2024)
    assert not is_leap(2023)

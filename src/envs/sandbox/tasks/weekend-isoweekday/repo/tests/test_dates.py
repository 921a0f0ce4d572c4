import datetime
from dates import is_weekend

def test_sunday():
    assert is_weekend(datetime.date(2024, 6, 2))
